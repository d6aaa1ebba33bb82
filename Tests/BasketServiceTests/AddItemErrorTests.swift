import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing
import JSON

/// Every refusal of `AddItem` (API.md §5), and the choices README makes where API.md is silent.
@Suite("AddItem refusals")
struct AddItemErrorTests {
    @Test("a product the catalog does not have is NOT_FOUND PRODUCT_NOT_FOUND")
    func unknownProduct() async throws {
        try await withBasketStack { stack in
            let ana = try await stack.shopper("ana")
            for productId in [9_999, 0, -4] {
                await expectRPCError(BasketReason.productNotFound) { try await ana.add(productId) }
            }
            #expect(try await ana.basket().version == 0, "a refused AddItem changes nothing")
        }
    }

    @Test("a product already in the basket is ALREADY_EXISTS with API.md's message, its details naming the line")
    func alreadyInBasket() async throws {
        try await withBasketStack { stack in
            let ana = try await stack.shopper("ana")
            let item = try #require(try await ana.add(2).line(of: 2))
            let error = await expectRPCError(BasketReason.alreadyInBasket) { try await ana.add(2, count: 3) }
            #expect(error?.message == "The product is already in basket.")
            #expect(error?.details == .object(["productId": .number(2), "itemId": .string(item.id)]))
            let basket = try await ana.basket()
            #expect(basket.items.count == 1 && basket.line(of: 2)?.count == 1 && basket.version == 1)
        }
    }

    @Test("a count outside 1...10 is INVALID_ARGUMENT INVALID_COUNT naming count, in words for people")
    func invalidCount() async throws {
        try await withBasketStack { stack in
            let ana = try await stack.shopper("ana")
            for count in [0, 11, -1, 1_000, Int.min] {
                let error = await expectRPCError(BasketReason.invalidCount) { try await ana.add(4, count: count) }
                #expect(error?.violatedFields == ["count"], "count \(count)")
                #expect(error?.message == "The count must be 1 to 10.")
            }
            for count in [1, 10] {
                #expect(try await ana.add(count == 1 ? 4 : 6, count: count).items.last?.count == count)
            }
        }
    }

    @Test("the 101st line is RESOURCE_EXHAUSTED BASKET_FULL; 100 lines are fine")
    func basketFull() async throws {
        try await withBasketStack { stack in
            let ana = try await stack.shopper("ana")
            let ids = try await stack.catalogOfAtLeast(BasketContract.maxLines + 1)
            var basket = try await ana.basket()
            for id in ids.prefix(BasketContract.maxLines) { basket = try await ana.add(id) }
            #expect(basket.items.count == BasketContract.maxLines)
            #expect(basket.version == BasketContract.maxLines)
            await expectRPCError(BasketReason.basketFull) { try await ana.add(ids[BasketContract.maxLines]) }
            // Full wins over the catalog: a full basket refuses even a product that does not exist.
            await expectRPCError(BasketReason.basketFull) { try await ana.add(99_999) }
            // Removing a line makes room again.
            try await ana.remove(basket.items[0].id)
            let refilled = try await ana.add(ids[BasketContract.maxLines])
            #expect(refilled.items.count == BasketContract.maxLines)
        }
    }

    @Test("a product in another currency than the basket's lines is FAILED_PRECONDITION CURRENCY_MISMATCH")
    func currencyMismatch() async throws {
        try await withBasketStack { stack in
            let ana = try await stack.shopper("ana")
            let euro = try await stack.createProduct(title: "Espresso cups", amount: 1_800, currency: "EUR")
            try await ana.add(1)
            await expectRPCError(.failedPrecondition, reason: "CURRENCY_MISMATCH") { try await ana.add(euro.id) }
            // An empty basket takes any currency, and its total is in that currency.
            try await ana.clear()
            let basket = try await ana.add(euro.id, count: 2)
            #expect(basket.total == Money(amount: 3_600, currency: "EUR"))
        }
    }
}
