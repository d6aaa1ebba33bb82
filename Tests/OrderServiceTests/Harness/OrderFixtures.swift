import Contracts
import RPC
import ServiceTestSupport
import JSON

/// The test processor's card numbers (API.md §6; order-svc README "Payments").
enum TestCards {
    /// A Luhn-valid visa that is charged.
    static let accepted = "4242424242424242"
    /// Declined.
    static let declined = "4000000000000002"
    /// Declined for insufficient funds.
    static let insufficientFunds = "4000000000009995"
}

extension CardDetails {
    /// `number` expiring 12/2030 with cvc 123.
    static func test(_ number: String = TestCards.accepted) -> CardDetails {
        CardDetails(cardNumber: number, expMonth: 12, expYear: 2030, cvc: "123")
    }
}

extension Address {
    /// An address every check accepts.
    static let sample = Address(
        name: "Ada Lovelace", line1: "12 Analytical Row", city: "London", postalCode: "N1 9GU", country: "GB")
}

extension PlaceOrderRequest {
    /// The sample address, paid with the accepted test card.
    static let standard = PlaceOrderRequest(shippingAddress: .sample, payment: .test())

    /// The sample address, paid with `card`.
    static func paying(with card: CardDetails) -> PlaceOrderRequest {
        PlaceOrderRequest(shippingAddress: .sample, payment: card)
    }
}

extension RPCError {
    /// The numbers of the `productIds` detail (OUT_OF_STOCK), in order.
    var productIDs: [Int] {
        details?["productIds"]?.arrayValue?.compactMap { value -> Int? in
            if case .number(let number) = value { return Int(number) }
            return nil
        } ?? []
    }
}

