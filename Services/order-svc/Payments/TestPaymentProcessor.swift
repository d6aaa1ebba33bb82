import Contracts

/// The built-in payment provider: a test processor with a ledger in order-svc's database.
/// Luhn-valid cards are charged (their validity is checked before it is called), except
/// API.md's two declining test numbers.
struct TestPaymentProcessor: PaymentProvider {
    /// The ledger.
    let store: OrderStore

    /// The test numbers that decline, and why.
    static let declines = [
        "4000000000000002": "The card was declined.",
        "4000000000009995": "The card was declined: insufficient funds.",
    ]

    func charge(orderID: String, amount: Money, card: PaymentCard) async throws -> ChargeOutcome {
        let decline = Self.declines[card.number]
        let recorded = try await store.recordTestCharge(
            orderID: orderID, amount: amount.amount, currency: amount.currency, brand: card.brand, last4: card.last4,
            charge: OrderStore.TestCharge(status: decline == nil ? "charged" : "declined", declineReason: decline))
        if recorded.status == "declined" { return .declined(reason: recorded.declineReason ?? "The card was declined.") }
        return .charged
    }

    func refund(orderID: String) async throws {
        _ = try await store.refundTestCharge(orderID: orderID)
    }
}
