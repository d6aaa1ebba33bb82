import Contracts
import Foundation
import RPC
@testable import StorefrontKit
import Testing

/// `orders.place`'s idempotency key over an in-process order service (``FakeShopService``):
/// one key per `place` (or the app's own), the same on each retry of it, for as long as the
/// order is in progress.
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

    @Test("In progress for longer than the retry policy's attempts last, a place keeps waiting with its key and ends with the first order")
    func longInProgressWaitedOut() async throws {
        let fake = FakeShopService(inProgressDuration: .seconds(3))
        let client = fake.client()
        let order = try await client.orders.place(address: Self.address, payment: Self.card)
        #expect(order.id == "order-1")
        // Waits of 0.5, 1 and 2 s: the fourth attempt, 3.5 s in, is the first past the 3 s (on a
        // busy machine an attempt may come later, and so one fewer).
        #expect((3...4).contains(fake.placeKeys.count) && Set(fake.placeKeys).count == 1, "\(fake.placeKeys)")
        #expect(fake.orderCount == 1)
        await client.close()
    }

    @Test("Still in progress when the wait's time is up: .requestInProgress, every attempt with one key, no order")
    func inProgressGivesUp() async throws {
        let fake = FakeShopService(inProgressAnswers: 100)
        let client = fake.client()
        var orders = client.orders
        orders.inProgressWait.limit = .seconds(2)
        let started = ContinuousClock.now
        await expectReason(.requestInProgress, .aborted) {
            _ = try await orders.place(address: Self.address, payment: Self.card)
        }
        #expect(ContinuousClock.now - started < .seconds(3), "gave up rather than wait 2 s more, to 3.5 s")
        // Attempts at 0, 0.5 and 1.5 s (later on a busy machine: then one fewer fits); the next
        // wait (2 s) would end past the limit.
        #expect((2...3).contains(fake.placeKeys.count) && Set(fake.placeKeys).count == 1, "\(fake.placeKeys)")
        #expect(fake.orderCount == 0)
        await client.close()
    }

    @Test("A cancelled task stops waiting for an order in progress: .cancelled")
    func inProgressWaitCancelled() async throws {
        let fake = FakeShopService(inProgressAnswers: 100)
        let client = fake.client()
        let place = Task { try await client.orders.place(address: Self.address, payment: Self.card) }
        try await Task.sleep(for: .milliseconds(200))
        let cancelled = ContinuousClock.now
        place.cancel()
        let outcome = await place.result
        let error = #expect(throws: StorefrontError.self) { try outcome.get() }
        #expect(error?.code == .cancelled, "\(String(describing: error))")
        #expect(ContinuousClock.now - cancelled < .seconds(1), "the wait ends at once")
        #expect(fake.orderCount == 0)
        await client.close()
    }

    @Test("A place with the app's key sends that key; the same key again answers the same order, placed once")
    func givenKeySent() async throws {
        let fake = FakeShopService()
        let client = fake.client()
        let first = try await client.orders.place(address: Self.address, payment: Self.card, idempotencyKey: "app-key-1")
        let again = try await client.orders.place(address: Self.address, payment: Self.card, idempotencyKey: "app-key-1")
        #expect(first == again)
        #expect(fake.placeKeys == ["app-key-1", "app-key-1"])
        #expect(fake.orderCount == 1)
        await client.close()
    }

    /// An address the fake ships to.
    static let address = Address(name: "Kit", line1: "1 Main St", city: "Town", postalCode: "1000", country: "US")
    /// A card the fake takes.
    static let card = CardDetails(cardNumber: "4242424242424242", expMonth: 1, expYear: 2040, cvc: "123")
}
