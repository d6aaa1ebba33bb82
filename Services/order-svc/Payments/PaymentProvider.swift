import Contracts

/// A card as the payment provider needs it; never stored, never logged (its description is
/// redacted).
struct PaymentCard: Sendable, CustomStringConvertible {
    /// The digits only.
    let number: String
    /// 1…12.
    let expMonth: Int
    /// Four digits.
    let expYear: Int
    /// 3–4 digits.
    let cvc: String

    /// `visa`, `mastercard`, `amex`, `discover` or `unknown`, from the number's prefix.
    var brand: String { CardRules.brand(of: number) }
    /// The last four digits.
    var last4: String { String(number.suffix(4)) }
    /// What may be stored and shown.
    var summary: PaymentSummary { PaymentSummary(brand: brand, last4: last4) }

    var description: String { "PaymentCard(\(brand) ••••\(last4))" }
}

/// What a charge led to.
enum ChargeOutcome: Sendable, Equatable {
    /// The money was taken.
    case charged
    /// The card was declined, for `reason` (safe to show).
    case declined(reason: String)
}

/// Moves money: charges and refunds, both idempotent per order id, so a retried or recovered
/// step never charges or refunds twice. The built-in implementation is `TestPaymentProcessor`;
/// a real processor (Stripe, Adyen…) replaces it behind this protocol.
protocol PaymentProvider: Sendable {
    /// Charges `amount` to `card` for `orderID`; charging an order again returns the first outcome.
    func charge(orderID: String, amount: Money, card: PaymentCard) async throws -> ChargeOutcome
    /// Refunds the charge of `orderID` if there is one; refunding again does nothing.
    func refund(orderID: String) async throws
}
