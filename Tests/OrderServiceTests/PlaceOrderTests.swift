import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// PlaceOrder's happy path over real sockets: prices from the catalog, one charge, the basket
/// cleared, the stock taken; and the token every order method requires.
@Suite("Placing an order")
struct PlaceOrderTests {
    @Test("a placed order is paid at the catalog's prices, charged once, and empties the basket")
    func paidOrder() async throws {
        try await withOrderStack { stack in
            let shopper = try await stack.newShopper()
            let laptop = try await stack.product(1)
            let mouse = try await stack.product(5)
            try await stack.addItem(laptop.id, count: 2, for: shopper)
            try await stack.addItem(mouse.id, count: 1, for: shopper)

            let order = try await stack.placeOrder(as: shopper)

            #expect(order.status == .paid)
            #expect(order.items.map(\.productId) == [laptop.id, mouse.id])
            #expect(order.items.map(\.count) == [2, 1])
            #expect(order.items.map(\.unitPrice) == [laptop.price, mouse.price])
            #expect(order.items.map(\.productTitle) == [laptop.title, mouse.title])
            for item in order.items {
                #expect(item.lineTotal == item.unitPrice.multiplied(by: item.count))
            }
            let expectedTotal = laptop.price.amount * 2 + mouse.price.amount
            #expect(order.total == Money(amount: expectedTotal, currency: laptop.price.currency))
            #expect(order.total.amount == order.items.reduce(0) { $0 + $1.lineTotal.amount })
            #expect(order.payment == PaymentSummary(brand: "visa", last4: "4242"))
            #expect(order.shippingAddress == .sample)
            #expect(isRFC3339(order.createdAt) && isRFC3339(order.updatedAt))

            let basket = try await stack.basket(of: shopper)
            #expect(basket.items.isEmpty)
            #expect(basket.itemCount == 0)
            #expect(try await stack.stock(of: laptop.id) == laptop.stock - 2)
            #expect(try await stack.stock(of: mouse.id) == mouse.stock - 1)

            let ledger = try await OrderDatabase(stack).rows(
                "SELECT order_id, amount, currency, brand, last4, status FROM test_charges")
            #expect(ledger == [[order.id, "\(expectedTotal)", laptop.price.currency, "visa", "4242", "charged"]])
        }
    }

    @Test("a price changed in the catalog after the item went into the basket is the price charged")
    func chargesTheCurrentPrice() async throws {
        try await withOrderStack { stack in
            let shopper = try await stack.newShopper()
            let original = try await stack.product(3)
            try await stack.addItem(original.id, count: 2, for: shopper)
            let repriced = try await stack.updateProduct(original.id) { $0.price.amount += 1_234 }
            #expect(repriced.price.amount == original.price.amount + 1_234)

            let order = try await stack.placeOrder(as: shopper)

            let line = try #require(order.items.first)
            #expect(order.items.count == 1)
            #expect(line.unitPrice == repriced.price)
            #expect(line.lineTotal.amount == repriced.price.amount * 2)
            #expect(order.total.amount == repriced.price.amount * 2)
            let charged = try await OrderDatabase(stack).integer("SELECT amount FROM test_charges")
            #expect(charged == repriced.price.amount * 2)
        }
    }

    @Test("every order method without a token is UNAUTHENTICATED MISSING_TOKEN")
    func missingToken() async throws {
        try await withOrderStack { stack in
            let order = try stack.client(.order)
            let options = OrderStack.plain()
            var placing = options
            placing.metadata.set(MetadataKey.idempotencyKey, UUID().uuidString)
            await expectRPCError(AuthReason.missingToken) {
                try await order.unary(OrderContract.placeOrder, .standard, options: placing)
            }
            await expectRPCError(AuthReason.missingToken) {
                try await order.unary(OrderContract.getOrder, GetOrderRequest(id: UUID().uuidString), options: options)
            }
            await expectRPCError(AuthReason.missingToken) {
                try await order.unary(OrderContract.listOrders, ListOrdersRequest(), options: options)
            }
            await expectRPCError(AuthReason.missingToken) {
                try await order.unary(OrderContract.cancelOrder, CancelOrderRequest(id: UUID().uuidString), options: options)
            }
            #expect(try await OrderDatabase(stack).chargeCount() == 0)
        }
    }
}
