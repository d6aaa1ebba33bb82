import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing

/// PlaceOrder while catalog-svc is down (issue 5, "Tests"): a retryable `UNAVAILABLE`, nothing
/// reserved, nothing charged, no order — and, the failure being transient, the key stays free.
@Suite("catalog-svc outage")
struct CatalogOutageLiveTests {
    @Test("with catalog-svc down PlaceOrder is UNAVAILABLE and leaves no charge, order or reservation")
    func catalogDown() async throws {
        try await withLiveOrderStack { stack in
            let shopper = try await stack.newShopper()
            let product = try await stack.product(7)
            try await stack.addItem(product.id, count: 2, for: shopper)
            let key = UUID().uuidString

            try await stack.service(.catalog).stop()
            await expectRPCError(.unavailable) { try await stack.placeOrder(key: key, as: shopper) }

            let database = OrderDatabase(stack)
            #expect(try await database.chargeCount() == 0)
            #expect(try await database.orderRowCount() == 0)
            #expect(try await stack.listOrders(as: shopper).orders.isEmpty)

            try await stack.restart(.catalog)
            #expect(try await stack.stock(of: product.id) == product.stock)
            // Transient failures are not stored (README), so retrying with the key places the order.
            let order = try await placeOnceReachable(stack, key: key, as: shopper)
            #expect(order.status == .paid)
            #expect(try await stack.stock(of: product.id) == product.stock - 2)
            #expect(try await database.chargeCount() == 1)
        }
    }

    /// PlaceOrder with `key`, retried while the services' clients are still reconnecting to
    /// the restarted catalog-svc (`UNAVAILABLE`), for up to 20 seconds.
    private func placeOnceReachable(_ stack: OrderStack, key: String, as shopper: Shopper) async throws -> Order {
        let deadline = ContinuousClock.now + .seconds(20)
        while true {
            do {
                return try await stack.placeOrder(key: key, as: shopper)
            } catch let error as RPCError where error.code == .unavailable && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(250))
            }
        }
    }
}
