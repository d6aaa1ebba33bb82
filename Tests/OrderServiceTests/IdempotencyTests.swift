import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing

/// The `idempotency-key` of PlaceOrder (API.md §6): the same key and request from the same user
/// get the first answer and are never charged twice; a different request under the key is
/// refused; concurrent calls with one key make one order.
@Suite("Idempotent PlaceOrder")
struct IdempotencyTests {
    @Test("the same key and request return the same order and charge once")
    func sameKeySameRequest() async throws {
        try await withOrderStack { stack in
            let shopper = try await stack.newShopper()
            let product = try await stack.product(15)
            try await stack.addItem(product.id, count: 2, for: shopper)
            let key = UUID().uuidString

            let first = try await stack.placeOrder(key: key, as: shopper)
            let second = try await stack.placeOrder(key: key, as: shopper)

            #expect(second == first)
            #expect(try await stack.listOrders(as: shopper).orders.map(\.id) == [first.id])
            #expect(try await OrderDatabase(stack).chargeCount() == 1)
            #expect(try await stack.stock(of: product.id) == product.stock - 2)
        }
    }

    @Test("the same key from another user is that user's own key")
    func keysBelongToTheirUser() async throws {
        try await withOrderStack { stack in
            let alice = try await stack.newShopper()
            let bob = try await stack.newShopper()
            try await stack.addItem(16, for: alice)
            try await stack.addItem(16, for: bob)
            let key = UUID().uuidString

            let alicesOrder = try await stack.placeOrder(key: key, as: alice)
            let bobsOrder = try await stack.placeOrder(key: key, as: bob)

            #expect(alicesOrder.id != bobsOrder.id)
            #expect(bobsOrder.status == .paid)
            #expect(try await OrderDatabase(stack).chargeCount() == 2)
        }
    }

    @Test("the same key with a different request is IDEMPOTENCY_KEY_REUSED and charges nothing more")
    func sameKeyDifferentRequest() async throws {
        try await withOrderStack { stack in
            let shopper = try await stack.newShopper()
            try await stack.addItem(17, for: shopper)
            let key = UUID().uuidString
            let first = try await stack.placeOrder(key: key, as: shopper)
            try await stack.addItem(17, for: shopper)

            var elsewhere = PlaceOrderRequest.standard
            elsewhere.shippingAddress.city = "Manchester"
            await expectRPCError(OrderReason.idempotencyKeyReused) {
                try await stack.placeOrder(elsewhere, key: key, as: shopper)
            }

            #expect(try await stack.listOrders(as: shopper).orders.map(\.id) == [first.id])
            #expect(try await OrderDatabase(stack).chargeCount() == 1)
            #expect(try await stack.basket(of: shopper).itemCount == 1)
        }
    }

    @Test("50 concurrent calls with one key make exactly one order and one charge")
    func concurrentCallsWithOneKey() async throws {
        try await withOrderStack { stack in
            try await Self.expectOneOrder(fromConcurrentCallsVia: [try stack.client(.order)], in: stack)
        }
    }

    /// Places 50 orders at once with one key, as one shopper with one item in the basket, the
    /// calls spread in turn over `replicas` (clients of order-svc processes sharing a
    /// database), and expects one paid order and one charge; the other calls are answered
    /// the order or `REQUEST_IN_PROGRESS`.
    static func expectOneOrder(fromConcurrentCallsVia replicas: [RPCClient], in stack: OrderStack) async throws {
        let shopper = try await stack.newShopper()
        let product = try await stack.product(18)
        try await stack.addItem(product.id, count: 1, for: shopper)
        let key = UUID().uuidString

        let outcomes = await withTaskGroup(of: Result<Order, any Error>.self) { group in
            for call in 0..<50 {
                let replica = replicas[call % replicas.count]
                group.addTask {
                    do {
                        return .success(try await stack.placeOrder(key: key, as: shopper, via: replica))
                    } catch {
                        return .failure(error)
                    }
                }
            }
            var outcomes: [Result<Order, any Error>] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes
        }

        var orderIDs = Set<String>()
        var inProgress = 0
        for outcome in outcomes {
            switch outcome {
            case .success(let order):
                #expect(order.status == .paid)
                orderIDs.insert(order.id)
            case .failure(let error as RPCError) where OrderReason.requestInProgress.matches(error):
                #expect(error.code == .aborted)
                inProgress += 1
            case .failure(let error):
                Issue.record(error, "neither the order nor REQUEST_IN_PROGRESS")
            }
        }
        #expect(orderIDs.count == 1)
        // The first call takes several hops and commits; 49 others arrive meanwhile.
        #expect(inProgress > 0)
        #expect(try await stack.listOrders(as: shopper).orders.map(\.id) == Array(orderIDs))
        #expect(try await OrderDatabase(stack).chargeCount() == 1)
        #expect(try await stack.stock(of: product.id) == product.stock - 1)
    }
}
