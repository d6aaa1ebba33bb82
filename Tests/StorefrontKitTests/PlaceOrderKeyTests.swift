import Contracts
import Foundation
import RPC
@testable import StorefrontKit
import Testing

/// `orders.place`'s idempotency key over an in-process order service (``FakeShopService``):
/// one key per `place`, the same on each retry of it.
@Suite("StorefrontKit placing an order, retried")
struct PlaceOrderKeyTests {
    @Test("Answered 'in progress', a place waits and asks again with the same key; the order is placed once")
    func inProgressRetriedWithSameKey() async throws {
        let fake = FakeShopService(inProgressAnswers: 2)
        let client = fake.client()
        let order = try await client.orders.place(address: Self.address, payment: Self.card)
        #expect(order.id == "order-1")
        #expect(fake.placeKeys.count == 3 && Set(fake.placeKeys).count == 1 && fake.placeKeys[0] != nil, "\(fake.placeKeys)")
        #expect(fake.orderCount == 1)
        await client.close()
    }

    @Test("Each place has a key of its own: two calls are two orders")
    func twoPlacesTwoOrders() async throws {
        let fake = FakeShopService()
        let client = fake.client()
        let first = try await client.orders.place(address: Self.address, payment: Self.card)
        let second = try await client.orders.place(address: Self.address, payment: Self.card)
        #expect(first.id != second.id)
        #expect(Set(fake.placeKeys).count == 2 && !fake.placeKeys.contains(nil))
        #expect(fake.orderCount == 2)
        await client.close()
    }

    @Test("Still in progress after every wait: .requestInProgress, after as many attempts as the retry policy allows")
    func inProgressGivesUp() async throws {
        let fake = FakeShopService(inProgressAnswers: 100)
        let client = fake.client()
        await expectReason(.requestInProgress, .aborted) {
            _ = try await client.orders.place(address: Self.address, payment: Self.card)
        }
        #expect(fake.placeKeys.count == client.calls.rpc.retry.maxAttempts && Set(fake.placeKeys).count == 1)
        #expect(fake.orderCount == 0)
        await client.close()
    }

    /// An address the fake ships to.
    static let address = Address(name: "Kit", line1: "1 Main St", city: "Town", postalCode: "1000", country: "US")
    /// A card the fake takes.
    static let card = CardDetails(cardNumber: "4242424242424242", expMonth: 1, expYear: 2040, cvc: "123")
}
