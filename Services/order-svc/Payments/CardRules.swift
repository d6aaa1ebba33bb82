import Contracts
import Foundation
import RPC

/// The checks on card details before any money moves (README "Choices"): each failure is
/// `INVALID_ARGUMENT`/`INVALID_CARD` naming the field.
enum CardRules {
    /// The card of `details`, checked at `now`.
    static func card(from details: CardDetails, now: Date = Date()) throws(RPCError) -> PaymentCard {
        guard let digits = CardNumber.digits(of: details.cardNumber), luhn(digits) else {
            throw invalid("payment.cardNumber", "The card number", "is not valid; check the digits")
        }
        guard (1...12).contains(details.expMonth) else {
            throw invalid("payment.expMonth", "The expiry month", "must be 1 to 12")
        }
        guard (1000...9999).contains(details.expYear) else {
            throw invalid("payment.expYear", "The expiry year", "must have four digits")
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let today = calendar.dateComponents([.year, .month], from: now)
        if details.expYear < today.year ?? 0 || (details.expYear == today.year && details.expMonth < today.month ?? 0) {
            throw invalid("payment.expYear", "The card", "has expired")
        }
        guard (3...4).contains(details.cvc.count), details.cvc.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw invalid("payment.cvc", "The security code (CVC)", "must be 3 or 4 digits")
        }
        return PaymentCard(number: digits, expMonth: details.expMonth, expYear: details.expYear, cvc: details.cvc)
    }

    /// Whether `digits` pass the Luhn check.
    static func luhn(_ digits: String) -> Bool {
        var sum = 0
        for (index, character) in digits.reversed().enumerated() {
            guard var value = character.wholeNumberValue else { return false }
            if index % 2 == 1 {
                value *= 2
                if value > 9 { value -= 9 }
            }
            sum += value
        }
        return sum % 10 == 0
    }

    /// The brand of a card number by its issuer prefix.
    static func brand(of digits: String) -> String {
        let two = Int(digits.prefix(2)) ?? 0
        let four = Int(digits.prefix(4)) ?? 0
        if digits.hasPrefix("4") { return "visa" }
        if (51...55).contains(two) || (2221...2720).contains(four) { return "mastercard" }
        if two == 34 || two == 37 { return "amex" }
        if four == 6011 || two == 65 { return "discover" }
        return "unknown"
    }

    /// `INVALID_CARD` naming `field` for programs, and saying `subject` `description` for people.
    private static func invalid(_ field: String, _ subject: String, _ description: String) -> RPCError {
        OrderReason.invalidCard.invalidField(field, description, subject: subject)
    }
}
