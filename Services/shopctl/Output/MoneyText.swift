import Foundation
import Contracts

/// Money as people read and type it: "$109.99" for US dollars, "12.34 EUR" for other
/// currencies, from and to the integer minor units of the wire (API.md §2). No floating point.
enum MoneyText {
    /// Digits after the decimal point for currencies that do not use two (ISO 4217).
    private static let minorDigits: [String: Int] = [
        "BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0, "PYG": 0,
        "RWF": 0, "UGX": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
        "BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
    ]

    /// How many minor-unit digits `currency` has: 2 unless ISO 4217 says otherwise.
    static func digits(of currency: String) -> Int {
        minorDigits[currency.uppercased()] ?? 2
    }

    /// `money` for people: "$109.99", "-$0.50", "12.34 EUR", "1200 JPY".
    static func format(_ money: Money) -> String {
        let digits = digits(of: money.currency)
        let magnitude = money.amount.magnitude
        var number: String
        if digits == 0 {
            number = String(magnitude)
        } else {
            var scale: UInt = 1
            for _ in 0..<digits { scale *= 10 }
            let fraction = String(magnitude % scale)
            number = "\(magnitude / scale)." + String(repeating: "0", count: digits - fraction.count) + fraction
        }
        let sign = money.amount < 0 ? "-" : ""
        if money.currency.uppercased() == "USD" { return "\(sign)$\(number)" }
        return "\(sign)\(number) \(money.currency)"
    }

    /// Parses an amount typed by a person ("12.34", "$12.34", "12", "0.5") into minor units of
    /// `currency`; nil when it is not a non-negative amount with at most the currency's digits.
    static func parse(_ text: String, currency: String) -> Money? {
        guard let (whole, fraction) = split(text) else { return nil }
        let digits = digits(of: currency)
        guard fraction.count <= digits else { return nil }
        guard let amount = Int(whole + fraction + String(repeating: "0", count: digits - fraction.count)) else { return nil }
        return Money(amount: amount, currency: currency.uppercased())
    }

    /// How many digits follow the decimal point of an amount typed by a person ("12.34" has 2,
    /// "1200" none), whatever the currency; nil when `text` is not a non-negative amount at all.
    static func decimalPlaces(in text: String) -> Int? {
        split(text)?.fraction.count
    }

    /// The digits before and after the decimal point of `text` (an optional "$", then digits,
    /// then optionally "." and at least one digit); nil for anything else.
    private static func split(_ text: String) -> (whole: String, fraction: String)? {
        var body = Substring(text.trimmingCharacters(in: .whitespaces))
        if body.first == "$" { body = body.dropFirst() }
        let parts = body.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, whole.allSatisfy(\.isASCIIDigit) else { return nil }
        guard parts.count == 2 else { return (String(whole), "") }
        let fraction = parts[1]
        guard !fraction.isEmpty, fraction.allSatisfy(\.isASCIIDigit) else { return nil }
        return (String(whole), String(fraction))
    }
}

extension Character {
    /// Whether this is one of the ASCII digits 0–9.
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
