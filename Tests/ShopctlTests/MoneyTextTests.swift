import Contracts
import Testing

@testable import shopctl

/// Prices as people read and type them: never through floating point.
@Suite("MoneyText: formatting and parsing amounts")
struct MoneyTextTests {
    @Test(
        "formats minor units with the currency's digits",
        arguments: [
            (Money(amount: 10999, currency: "USD"), "$109.99"),
            (Money(amount: 5, currency: "USD"), "$0.05"),
            (Money(amount: 0, currency: "USD"), "$0.00"),
            (Money(amount: -150, currency: "USD"), "-$1.50"),
            (Money(amount: 1234, currency: "EUR"), "12.34 EUR"),
            (Money(amount: 1200, currency: "JPY"), "1200 JPY"),
            (Money(amount: 12345, currency: "KWD"), "12.345 KWD"),
            (Money(amount: 100_000_000_00, currency: "USD"), "$100000000.00"),
        ])
    func formats(money: Money, text: String) {
        #expect(MoneyText.format(money) == text)
    }

    @Test(
        "parses typed amounts into minor units",
        arguments: [
            ("12.34", "USD", 1234), ("$12.34", "USD", 1234), ("12", "USD", 1200), ("0.5", "USD", 50),
            (" 7.05 ", "USD", 705), ("1200", "JPY", 1200), ("1.234", "KWD", 1234),
        ])
    func parses(text: String, currency: String, amount: Int) {
        #expect(MoneyText.parse(text, currency: currency) == Money(amount: amount, currency: currency))
    }

    @Test(
        "refuses what is not an amount",
        arguments: ["", "abc", "12.345", "-1.00", "1e3", "12.", ".5", "1.2.3", "12,34", "1.5"])
    func refuses(text: String) {
        // "1.5" is refused only for yen, which has no minor digits; the rest for dollars too.
        let currency = text == "1.5" ? "JPY" : "USD"
        #expect(MoneyText.parse(text, currency: currency) == nil)
    }

    @Test(
        "counts the decimal places of a typed amount, whatever the currency",
        arguments: [("1200", 0), ("$12", 0), ("12.3", 1), ("12.34", 2), ("1.234", 3), (" 0.5 ", 1)] as [(String, Int)])
    func decimalPlaces(text: String, places: Int) {
        #expect(MoneyText.decimalPlaces(in: text) == places)
    }

    @Test("has no decimal places for what is not an amount", arguments: ["", "abc", "-1.00", "1e3", "12.", ".5", "1.2.3", "12,34"])
    func noDecimalPlaces(text: String) {
        #expect(MoneyText.decimalPlaces(in: text) == nil)
    }

    @Test("a formatted price parses back to the same amount")
    func roundTrip() {
        for amount in [0, 1, 99, 100, 10999, 123_456_789] {
            let money = Money(amount: amount, currency: "USD")
            #expect(MoneyText.parse(MoneyText.format(money), currency: "USD") == money)
        }
    }
}
