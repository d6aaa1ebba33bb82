import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing

/// The user is always the token's subject: no call reaches another user's basket.
@Suite("One basket per user")
struct IsolationTests {
    @Test("another user's item ids are ITEM_NOT_FOUND, and their basket stays as it was")
    func cannotTouchAnotherBasket() async throws {
        try await withBasketStack { stack in
            let ana = try await stack.shopper("ana")
            let ben = try await stack.shopper("ben")
            let anas = try await ana.add(5, count: 2)
            let item = try #require(anas.line(of: 5))

            let bens = try await ben.basket()
            #expect(bens.items.isEmpty && bens.version == 0, "ben sees his own, empty basket")
            await expectRPCError(BasketReason.itemNotFound) { try await ben.setCount(item.id, to: 9) }
            await expectRPCError(BasketReason.itemNotFound) { try await ben.setCount(item.id, to: 0) }
            await expectRPCError(BasketReason.itemNotFound) { try await ben.remove(item.id) }
            try await ben.clear()
            try await ben.add(5)

            #expect(try await ana.basket() == anas)
            #expect(try await ben.basket().line(of: 5)?.id != item.id)
        }
    }

    @Test("two sessions of one user share one basket")
    func sessionsShare() async throws {
        try await withBasketStack { stack in
            let phone = try await stack.shopper("ana")
            let laptop = try await stack.anotherSession(of: phone)
            #expect(phone.accessToken != laptop.accessToken)
            let added = try await phone.add(6)
            #expect(try await laptop.basket() == added)
            await expectRPCError(BasketReason.alreadyInBasket) { try await laptop.add(6) }
        }
    }
}
