import Contracts
import RPC
import Testing

@testable import order_svc
import JSON

/// What order-svc's refusals carry: a stable reason for every field limit, messages in the
/// shopper's words (field paths only in the details), at most 64 characters of client input
/// quoted in a message, and how many are left of each product that is short.
@Suite("order-svc: refusals")
struct RefusalMessageTests {
    @Test("GetOrder of a 100 KB id quotes at most 64 characters of it")
    func boundedEcho() {
        let id = String(repeating: "x", count: 100_000)
        let error = OrderError.orderNotFound(id: id).rpcError
        #expect(error.reason == OrderReason.orderNotFound.rawValue)
        #expect(error.message.count <= "No order  for this user.".count + ClientInput.maxCharacters + 1, "\(error.message.count) characters")
        #expect(error.message.contains(String(repeating: "x", count: 64) + "…"))
        #expect(OrderError.orderNotFound(id: "abc").rpcError.message == "No order abc for this user.")
    }

    /// Addresses that break one rule each, the field named and the message.
    static let badAddresses: [(Address, String, String)] = {
        let good = Address(name: "Ana", line1: "1 Main St", line2: nil, city: "Springfield", postalCode: "12345", country: "US")
        var noName = good
        noName.name = " "
        var longLine1 = good
        longLine1.line1 = String(repeating: "a", count: 201)
        var longLine2 = good
        longLine2.line2 = String(repeating: "b", count: 201)
        var country = good
        country.country = "usa"
        return [
            (noName, "shippingAddress.name", "The recipient's name must be 1 to 200 characters."),
            (longLine1, "shippingAddress.line1", "The first address line must be 1 to 200 characters."),
            (longLine2, "shippingAddress.line2", "The second address line must be at most 200 characters."),
            (country, "shippingAddress.country", "The country must be a two-letter ISO 3166-1 code, e.g. US."),
        ]
    }()

    @Test("a bad shipping address is INVALID_ARGUMENT/INVALID_ADDRESS naming the field, in words for people", arguments: badAddresses)
    func invalidAddress(address: Address, field: String, message: String) {
        do {
            try AddressRules.check(address)
            Issue.record("\(address) was accepted")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.reason == "INVALID_ADDRESS", "\(error)")
            let fields = error.details?["fieldViolations"]?.arrayValue?.compactMap { $0["field"]?.stringValue }
            #expect(fields == [field])
            #expect(error.message == message)
        }
    }

    /// Cards that break one rule each, the field named and the message.
    static let badCards: [(CardDetails, String, String)] = [
        (CardDetails(cardNumber: "4242424242424241", expMonth: 12, expYear: 2030, cvc: "123"), "payment.cardNumber",
         "The card number is not valid; check the digits."),
        (CardDetails(cardNumber: "4242424242424242", expMonth: 13, expYear: 2030, cvc: "123"), "payment.expMonth",
         "The expiry month must be 1 to 12."),
        (CardDetails(cardNumber: "4242424242424242", expMonth: 1, expYear: 2020, cvc: "123"), "payment.expYear",
         "The card has expired."),
        (CardDetails(cardNumber: "4242424242424242", expMonth: 12, expYear: 2030, cvc: "12"), "payment.cvc",
         "The security code (CVC) must be 3 or 4 digits."),
    ]

    @Test("a bad card is INVALID_CARD naming the field for programs and speaking plainly to people", arguments: badCards)
    func invalidCard(card: CardDetails, field: String, message: String) {
        do {
            _ = try CardRules.card(from: card)
            Issue.record("\(card) was accepted")
        } catch {
            #expect(error.reason == OrderReason.invalidCard.rawValue)
            #expect(error.details?["fieldViolations"]?.arrayValue?.compactMap { $0["field"]?.stringValue } == [field])
            #expect(error.message == message)
        }
    }

    @Test("catalog-svc's OUT_OF_STOCK becomes the order's, saying how many are left of each short product")
    func outOfStockTranslation() {
        let shortages = [
            StockShortage(productId: 25, available: 7, wanted: 10), StockShortage(productId: 3, available: 0, wanted: 1),
        ]
        let catalog = CatalogReason.outOfStock.error("any wording", details: StockShortage.details(shortages))
        let error = OrderService.outOfStock(translating: catalog)
        #expect(error.reason == OrderReason.outOfStock.rawValue && error.code == .failedPrecondition)
        #expect(error.message == "Not enough stock: product 25 has 7 left (10 wanted); product 3 is sold out.")
        #expect(StockShortage.list(in: error.details) == shortages)
        #expect(error.details?["productIds"] == .array([.number(25), .number(3)]))

        // A catalog that names only the product ids is passed on as it answered.
        let older = CatalogReason.outOfStock.error(
            "Not enough stock of product 4.", details: .object(["productIds": .array([.number(4)])]))
        let passed = OrderService.outOfStock(translating: older)
        #expect(passed.message == older.message && passed.details == older.details)
    }
}
