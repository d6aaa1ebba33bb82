import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// The PlaceOrder refusals of API.md §6 that happen before any money moves: an empty basket,
/// short stock, a bad card, a missing or oversized idempotency key. None leaves an order, a
/// charge or a reservation behind.
@Suite("PlaceOrder refusals")
struct PlaceOrderRefusalTests {
    /// A card the checks refuse, and the field the refusal names.
    struct RejectedCard: Sendable, CustomTestStringConvertible {
        /// The card sent.
        let card: CardDetails
        /// The field the violation must name.
        let field: String
        /// What is wrong with it, as the test run shows it.
        let testDescription: String
    }

    /// One card for each check of the README's "Choices".
    static let rejectedCards = [
        RejectedCard(
            card: .test("4242424242424241"), field: "payment.cardNumber", testDescription: "a number failing Luhn"),
        RejectedCard(
            card: CardDetails(cardNumber: TestCards.accepted, expMonth: 13, expYear: 2030, cvc: "123"),
            field: "payment.expMonth", testDescription: "month 13"),
        RejectedCard(
            card: CardDetails(cardNumber: TestCards.accepted, expMonth: 1, expYear: 2020, cvc: "123"),
            field: "payment.expYear", testDescription: "an expired card"),
        RejectedCard(
            card: CardDetails(cardNumber: TestCards.accepted, expMonth: 12, expYear: 2030, cvc: "12"),
            field: "payment.cvc", testDescription: "a two-digit cvc"),
    ]

    @Test("an empty basket is EMPTY_BASKET with the fixed message, and no order")
    func emptyBasket() async throws {
        try await withOrderStack { stack in
            let shopper = try await stack.newShopper()
            let error = await expectRPCError(OrderReason.emptyBasket) { try await stack.placeOrder(as: shopper) }
            #expect(error?.message == "Your basket is empty. Add some products first.")
            #expect(try await stack.listOrders(as: shopper).orders.isEmpty)
            #expect(try await OrderDatabase(stack).chargeCount() == 0)
        }
    }

    @Test("a price too large to total (written into the catalog's database) is FAILED_PRECONDITION, not a crash")
    func priceTooLargeToTotal() async throws {
        try await withOrderStack { stack in
            let shopper = try await stack.newShopper()
            try await stack.addItem(4, count: 3, for: shopper)
            // catalog-svc refuses such a price (Money.maximumUnitAmount); a row from before the
            // rule, or edited by hand, still reaches order-svc, whose line total overflowed.
            try await OrderDatabase.catalog(of: stack).execute("UPDATE products SET price_amount = \(Int.max / 2) WHERE id = 4")

            let error = await expectRPCError(.failedPrecondition) { try await stack.placeOrder(as: shopper) }
            #expect(error?.message.contains("Product 4") == true, "\(String(describing: error))")
            #expect(try await stack.listOrders(as: shopper).orders.isEmpty)
            #expect(try await OrderDatabase(stack).chargeCount() == 0)
        }
    }

    @Test("a product deleted from the catalog since it was added is OUT_OF_STOCK with 0 available")
    func productGone() async throws {
        try await withOrderStack { stack in
            let shopper = try await stack.newShopper()
            try await stack.addItem(9, count: 2, for: shopper)
            let options = CallOptions(metadata: [MetadataKey.apiKey: stack.adminKey], timeout: .seconds(15))
            _ = try await stack.client(.catalog).unary(
                CatalogContract.deleteProduct, DeleteProductRequest(id: 9), options: options)

            let error = await expectRPCError(OrderReason.outOfStock) { try await stack.placeOrder(as: shopper) }
            #expect(error?.message == "Product 9 is no longer sold.")
            #expect(StockShortage.list(in: error?.details) == [StockShortage(productId: 9, available: 0, wanted: 2)])
            #expect(error?.productIDs == [9])
        }
    }

    @Test("a malformed card is INVALID_CARD naming the field; nothing is charged and the key stays free",
        arguments: rejectedCards)
    func invalidCard(_ rejected: RejectedCard) async throws {
        try await withOrderStack { stack in
            let shopper = try await stack.newShopper()
            let product = try await stack.product(8)
            let basket = try await stack.addItem(product.id, count: 2, for: shopper)
            let key = UUID().uuidString

            let error = await expectRPCError(OrderReason.invalidCard) {
                try await stack.placeOrder(.paying(with: rejected.card), key: key, as: shopper)
            }

            #expect(error?.violatedFields == [rejected.field])
            #expect(try await OrderDatabase(stack).chargeCount() == 0)
            #expect(try await stack.listOrders(as: shopper).orders.isEmpty)
            #expect(try await stack.stock(of: product.id) == product.stock)
            #expect(try await stack.basket(of: shopper).version == basket.version)
            // Refused before the key was recorded (README), so the corrected request may use it.
            let order = try await stack.placeOrder(key: key, as: shopper)
            #expect(order.status == .paid)
        }
    }

    @Test("an idempotency key that is missing or 256 characters long is IDEMPOTENCY_KEY_REQUIRED",
        arguments: [nil, String(repeating: "k", count: 256)])
    func idempotencyKeyRequired(_ key: String?) async throws {
        try await withOrderStack { stack in
            let shopper = try await stack.newShopper()
            try await stack.addItem(9, for: shopper)
            await expectRPCError(OrderReason.idempotencyKeyRequired) {
                try await stack.placeOrder(key: key, as: shopper)
            }
            #expect(try await OrderDatabase(stack).chargeCount() == 0)
            #expect(try await stack.listOrders(as: shopper).orders.isEmpty)
            #expect(try await stack.basket(of: shopper).itemCount == 1)
        }
    }

    @Test("an idempotency key of 255 characters is accepted")
    func longestIdempotencyKey() async throws {
        try await withOrderStack { stack in
            let shopper = try await stack.newShopper()
            try await stack.addItem(9, for: shopper)
            let order = try await stack.placeOrder(key: String(repeating: "k", count: 255), as: shopper)
            #expect(order.status == .paid)
        }
    }
}
