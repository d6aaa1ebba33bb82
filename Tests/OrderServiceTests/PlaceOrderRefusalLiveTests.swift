import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing

/// The PlaceOrder refusal whose answer is checked through the gateway (a process): short
/// stock. The other refusals run in process (``PlaceOrderRefusalTests``).
@Suite("PlaceOrder refusals (live)")
struct PlaceOrderRefusalLiveTests {
    @Test("stock that fell below the basket is OUT_OF_STOCK saying, through the gateway, how many are left of each; nothing reserved, no order")
    func outOfStock() async throws {
        try await withServiceStack(ServiceName.services + [.gateway]) { stack in
            let shopper = try await stack.newShopper()
            let plenty = try await stack.product(4)
            try await stack.addItem(plenty.id, count: 1, for: shopper)
            try await stack.addItem(6, count: 3, for: shopper)
            try await stack.addItem(8, count: 1, for: shopper)
            // The basket checked the stock when the lines were added; it fell since.
            try await stack.updateProduct(6) { $0.stock = 2 }
            try await stack.updateProduct(8) { $0.stock = 0 }

            var options = shopper.options(timeout: .seconds(30))
            options.metadata.set(MetadataKey.idempotencyKey, UUID().uuidString)
            let error = await expectRPCError(OrderReason.outOfStock) {
                try await stack.client(.gateway).unary(OrderContract.placeOrder, .standard, options: options)
            }

            #expect(error?.message == "Not enough stock: product 6 has 2 left (3 wanted); product 8 is sold out.")
            #expect(error?.productIDs == [6, 8])
            #expect(StockShortage.list(in: error?.details) == [
                StockShortage(productId: 6, available: 2, wanted: 3), StockShortage(productId: 8, available: 0, wanted: 1),
            ])
            #expect(try await stack.stock(of: 6) == 2)
            #expect(try await stack.stock(of: plenty.id) == plenty.stock)
            #expect(try await stack.listOrders(as: shopper).orders.isEmpty)
            let database = OrderDatabase(stack)
            #expect(try await database.chargeCount() == 0)
            #expect(try await database.orderRowCount() == 0)
            #expect(try await stack.basket(of: shopper).itemCount == 5)
        }
    }
}
