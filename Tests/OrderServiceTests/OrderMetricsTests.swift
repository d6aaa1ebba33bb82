import Contracts
import Foundation
import InProcessServices
import RPC
import ServiceTestSupport
import Testing

/// order-svc's domain metrics (issue 31): each placement counted once by how it ended — a
/// retry with the same key replays the stored answer and counts nothing — and refunds.
@Suite("Order metrics")
struct OrderMetricsTests {
    /// Every outcome of `order_orders_total`.
    static let outcomes = ["paid", "declined", "out_of_stock", "rejected", "failed"]

    /// `order_orders_total` of each outcome in order-svc's metrics now.
    static func orders(in stack: OrderStack) throws -> [String: Double] {
        let metrics = try stack.metrics(of: .order)
        var counts: [String: Double] = [:]
        for outcome in outcomes { counts[outcome] = metrics.value("order_orders_total{outcome=\"\(outcome)\"}") }
        return counts
    }

    /// The counts with `outcome` at 1 and every other at 0 (all at 0 for nil).
    static func only(_ outcome: String?) -> [String: Double] {
        Dictionary(uniqueKeysWithValues: outcomes.map { ($0, $0 == outcome ? 1 : 0) })
    }

    @Test("a paid order counts once as paid; its replay under the same key counts nothing")
    func paid() async throws {
        try await withOrderStack { stack in
            #expect(try Self.orders(in: stack) == Self.only(nil))
            let shopper = try await stack.newShopper()
            try await stack.addItem(10, count: 1, for: shopper)
            let key = UUID().uuidString
            let placed = try await stack.placeOrder(key: key, as: shopper)
            #expect(try await stack.placeOrder(key: key, as: shopper) == placed)
            #expect(try Self.orders(in: stack) == Self.only("paid"))
        }
    }

    @Test("a declined card counts once as declined; its replay counts nothing")
    func declined() async throws {
        try await withOrderStack { stack in
            let shopper = try await stack.newShopper()
            try await stack.addItem(10, count: 1, for: shopper)
            let key = UUID().uuidString
            for _ in 0..<2 {
                await expectRPCError(OrderReason.paymentDeclined) {
                    try await stack.placeOrder(.paying(with: .test(TestCards.declined)), key: key, as: shopper)
                }
            }
            #expect(try Self.orders(in: stack) == Self.only("declined"))
        }
    }

    @Test("too little stock counts once as out_of_stock; its replay counts nothing")
    func outOfStock() async throws {
        try await withOrderStack { stack in
            let shopper = try await stack.newShopper()
            try await stack.addItem(10, count: 2, for: shopper)
            try await stack.updateProduct(10) { $0.stock = 1 }
            let key = UUID().uuidString
            for _ in 0..<2 {
                await expectRPCError(OrderReason.outOfStock) { try await stack.placeOrder(key: key, as: shopper) }
            }
            #expect(try Self.orders(in: stack) == Self.only("out_of_stock"))
        }
    }

    @Test("an empty basket counts as rejected")
    func rejected() async throws {
        try await withOrderStack { stack in
            let shopper = try await stack.newShopper()
            await expectRPCError(OrderReason.emptyBasket) { try await stack.placeOrder(as: shopper) }
            #expect(try Self.orders(in: stack) == Self.only("rejected"))
        }
    }

    @Test("cancelling a paid order counts one refund; a second cancel is refused and counts none")
    func refund() async throws {
        try await withOrderStack { stack in
            let shopper = try await stack.newShopper()
            try await stack.addItem(10, count: 1, for: shopper)
            let placed = try await stack.placeOrder(as: shopper)
            #expect(try stack.metrics(of: .order).value("order_refunds_total") == 0)
            _ = try await stack.cancelOrder(placed.id, as: shopper)
            await expectRPCError(OrderReason.orderNotCancellable) { try await stack.cancelOrder(placed.id, as: shopper) }
            #expect(try stack.metrics(of: .order).value("order_refunds_total") == 1)
            #expect(try Self.orders(in: stack) == Self.only("paid"))
        }
    }
}
