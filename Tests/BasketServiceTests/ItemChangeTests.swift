import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing
import JSON

/// `UpdateItemCount`, `RemoveItem` and `ClearBasket`, with every refusal (API.md §5).
@Suite("Changing lines")
struct ItemChangeTests {
    @Test("UpdateItemCount sets 1...10, 0 removes the line, anything else is INVALID_COUNT")
    func updateItemCount() async throws {
        try await withBasketStack { stack in
            let ana = try await stack.shopper("ana")
            let unit = try await stack.product(8).price.amount
            let item = try #require(try await ana.add(8).line(of: 8))
            let ten = try await ana.setCount(item.id, to: 10)
            #expect(ten.line(of: 8)?.count == 10)
            #expect(ten.line(of: 8)?.lineTotal.amount == unit * 10)
            #expect(ten.total.amount == unit * 10 && ten.itemCount == 10 && ten.version == 2)
            for count in [11, -1, 100] {
                let error = await expectRPCError(BasketReason.invalidCount) { try await ana.setCount(item.id, to: count) }
                #expect(error?.violatedFields == ["count"])
            }
            #expect(try await ana.basket().version == 2)
            let removed = try await ana.setCount(item.id, to: 0)
            #expect(removed.items.isEmpty && removed.total.amount == 0 && removed.version == 3)
            await expectRPCError(BasketReason.itemNotFound) { try await ana.setCount(item.id, to: 2) }
        }
    }

    @Test("setting the count a line already has changes nothing, not even the version")
    func sameCount() async throws {
        try await withBasketStack { stack in
            let ana = try await stack.shopper("ana")
            let basket = try await ana.add(9, count: 3)
            let item = try #require(basket.line(of: 9))
            #expect(try await ana.setCount(item.id, to: 3) == basket)
        }
    }

    @Test("an unknown item id is NOT_FOUND ITEM_NOT_FOUND for UpdateItemCount and RemoveItem")
    func unknownItem() async throws {
        try await withBasketStack { stack in
            let ana = try await stack.shopper("ana")
            try await ana.add(1)
            let stranger = UUID().uuidString.lowercased()
            await expectRPCError(BasketReason.itemNotFound) { try await ana.setCount(stranger, to: 2) }
            await expectRPCError(BasketReason.itemNotFound) { try await ana.remove(stranger) }
            #expect(try await ana.basket().version == 1)
        }
    }

    @Test("item ids are accepted in upper case too")
    func itemIDCase() async throws {
        try await withBasketStack { stack in
            let ana = try await stack.shopper("ana")
            let item = try #require(try await ana.add(1).line(of: 1))
            #expect(try await ana.setCount(item.id.uppercased(), to: 5).line(of: 1)?.count == 5)
        }
    }

    @Test("expectedVersion: the current version succeeds, any other is ABORTED VERSION_CONFLICT")
    func expectedVersion() async throws {
        try await withBasketStack { stack in
            let ana = try await stack.shopper("ana")
            try await ana.add(1)
            let basket = try await ana.add(2)
            let item = try #require(basket.line(of: 2))
            for stale in [0, 1, 3, 99] {
                let error = await expectRPCError(BasketReason.versionConflict) {
                    try await ana.setCount(item.id, to: 4, expectedVersion: stale)
                }
                #expect(error?.details?["currentVersion"] == .number(2))
                await expectRPCError(BasketReason.versionConflict) { try await ana.clear(expectedVersion: stale) }
            }
            let updated = try await ana.setCount(item.id, to: 4, expectedVersion: 2)
            #expect(updated.version == 3 && updated.line(of: 2)?.count == 4)
            // The version is checked before the line: a stale request learns it is stale.
            await expectRPCError(BasketReason.versionConflict) {
                try await ana.setCount(UUID().uuidString, to: 4, expectedVersion: 2)
            }
            let cleared = try await ana.clear(expectedVersion: 3)
            #expect(cleared.items.isEmpty && cleared.version == 4)
        }
    }

    @Test("RemoveItem removes one line; a second RemoveItem of it is ITEM_NOT_FOUND")
    func removeItem() async throws {
        try await withBasketStack { stack in
            let ana = try await stack.shopper("ana")
            try await ana.add(1)
            let basket = try await ana.add(2, count: 2)
            let item = try #require(basket.line(of: 1))
            let after = try await ana.remove(item.id)
            #expect(after.items.map(\.productId) == [2])
            #expect(after.itemCount == 2 && after.version == 3)
            await expectRPCError(BasketReason.itemNotFound) { try await ana.remove(item.id) }
            // The product can be added again, as a new line.
            let again = try await ana.add(1)
            #expect(again.line(of: 1).map(\.id) != item.id)
        }
    }

    @Test("ClearBasket empties the basket; clearing an empty basket changes nothing")
    func clearBasket() async throws {
        try await withBasketStack { stack in
            let ana = try await stack.shopper("ana")
            #expect(try await ana.clear().version == 0)
            try await ana.add(1)
            try await ana.add(2)
            let cleared = try await ana.clear()
            #expect(cleared.items.isEmpty && cleared.itemCount == 0 && cleared.total == Money(amount: 0, currency: "USD"))
            #expect(cleared.version == 3)
            #expect(try await ana.clear(expectedVersion: 3).version == 3)
            #expect(try await ana.basket() == cleared)
        }
    }
}
