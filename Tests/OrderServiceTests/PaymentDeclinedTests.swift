import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing

/// A declined card (API.md §6): `PAYMENT_DECLINED`, an order left in `PAYMENT_FAILED` that the
/// user can see, the stock given back and the basket untouched.
@Suite("Declined payments")
struct PaymentDeclinedTests {
    @Test("a declining test card is PAYMENT_DECLINED and leaves a PAYMENT_FAILED order, stock and basket as they were",
        arguments: [TestCards.declined, TestCards.insufficientFunds])
    func declined(_ number: String) async throws {
        try await withOrderStack { stack in
            let shopper = try await stack.newShopper()
            let first = try await stack.product(10)
            let second = try await stack.product(11)
            try await stack.addItem(first.id, count: 1, for: shopper)
            let basket = try await stack.addItem(second.id, count: 2, for: shopper)
            let key = UUID().uuidString

            let error = await expectRPCError(OrderReason.paymentDeclined) {
                try await stack.placeOrder(.paying(with: .test(number)), key: key, as: shopper)
            }
            #expect(error?.message.isEmpty == false)

            let listed = try await stack.listOrders(as: shopper).orders
            #expect(listed.count == 1)
            let order = try #require(listed.first)
            #expect(order.status == .paymentFailed)
            #expect(order.payment == PaymentSummary(brand: "visa", last4: String(number.suffix(4))))
            #expect(order.items.map(\.productId) == [first.id, second.id])
            #expect(try await stack.order(order.id, as: shopper) == order)

            #expect(try await stack.stock(of: first.id) == first.stock)
            #expect(try await stack.stock(of: second.id) == second.stock)
            let after = try await stack.basket(of: shopper)
            #expect(after.items == basket.items)
            #expect(after.version == basket.version)

            let database = OrderDatabase(stack)
            #expect(try await database.chargeStatus(of: order.id) == "declined")
            // The same key answers the stored decline again without charging anything more.
            await expectRPCError(OrderReason.paymentDeclined) {
                try await stack.placeOrder(.paying(with: .test(number)), key: key, as: shopper)
            }
            #expect(try await database.chargeCount() == 1)
            #expect(try await stack.listOrders(as: shopper).orders.count == 1)
        }
    }
}
