import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing

/// CancelOrder (API.md §6, README "Choices"): a paid order is refunded, its stock released and
/// it becomes `CANCELLED`; anything else is `ORDER_NOT_CANCELLABLE`.
@Suite("Cancelling an order")
struct CancelOrderTests {
    @Test("a paid order becomes CANCELLED, its charge is refunded and its stock comes back")
    func cancelPaidOrder() async throws {
        try await withOrderStack { stack in
            let shopper = try await stack.newShopper()
            let product = try await stack.product(12)
            try await stack.addItem(product.id, count: 3, for: shopper)
            let placed = try await stack.placeOrder(as: shopper)
            #expect(try await stack.stock(of: product.id) == product.stock - 3)

            let cancelled = try await stack.cancelOrder(placed.id, as: shopper)

            #expect(cancelled.id == placed.id)
            #expect(cancelled.status == .cancelled)
            #expect(cancelled.items == placed.items)
            #expect(cancelled.total == placed.total)
            #expect(try await stack.order(placed.id, as: shopper).status == .cancelled)
            #expect(try await stack.stock(of: product.id) == product.stock)
            let database = OrderDatabase(stack)
            #expect(try await database.chargeStatus(of: placed.id) == "refunded")
            #expect(try await database.chargeCount() == 1)

            await expectRPCError(OrderReason.orderNotCancellable) { try await stack.cancelOrder(placed.id, as: shopper) }
            #expect(try await stack.stock(of: product.id) == product.stock)
            #expect(try await stack.order(placed.id, as: shopper).status == .cancelled)
        }
    }

    @Test("an order whose payment failed is ORDER_NOT_CANCELLABLE")
    func paymentFailedIsNotCancellable() async throws {
        try await withOrderStack { stack in
            let shopper = try await stack.newShopper()
            let product = try await stack.product(13)
            try await stack.addItem(product.id, count: 1, for: shopper)
            await expectRPCError(OrderReason.paymentDeclined) {
                try await stack.placeOrder(.paying(with: .test(TestCards.declined)), as: shopper)
            }
            let failed = try #require(try await stack.listOrders(as: shopper).orders.first)
            #expect(failed.status == .paymentFailed)

            await expectRPCError(OrderReason.orderNotCancellable) { try await stack.cancelOrder(failed.id, as: shopper) }

            #expect(try await stack.order(failed.id, as: shopper).status == .paymentFailed)
            #expect(try await stack.stock(of: product.id) == product.stock)
            #expect(try await OrderDatabase(stack).chargeStatus(of: failed.id) == "declined")
        }
    }

    @Test("another user's order cannot be cancelled: ORDER_NOT_FOUND, and it stays paid")
    func anotherUsersOrder() async throws {
        try await withOrderStack { stack in
            let owner = try await stack.newShopper()
            let stranger = try await stack.newShopper()
            try await stack.addItem(14, for: owner)
            let placed = try await stack.placeOrder(as: owner)

            await expectRPCError(OrderReason.orderNotFound) { try await stack.cancelOrder(placed.id, as: stranger) }

            #expect(try await stack.order(placed.id, as: owner).status == .paid)
            #expect(try await OrderDatabase(stack).chargeStatus(of: placed.id) == "charged")
        }
    }
}
