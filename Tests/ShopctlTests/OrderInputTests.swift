import Contracts
import Testing

@testable import shopctl

/// `order place`'s address and card: flags, then environment, then the saved profile.
@Suite("OrderInput: address and card from flags, environment or profile")
struct OrderInputTests {
    private static let profile = Address(
        name: "Saved Name", line1: "Saved Street", line2: "Flat 2", city: "Saved City", postalCode: "11111", country: "DE")

    @Test("a flag wins over the environment, which wins over the profile, field by field")
    func precedence() throws {
        let input = OrderInput(name: "Flag Name", city: nil, card: "4242424242424242", expiry: "12/30", cvc: "123")
        let environment = ["SHOP_SHIP_CITY": "Env City", "SHOP_SHIP_NAME": "Env Name"]
        let address = try input.address(environment: environment, profile: Self.profile)
        #expect(address == Address(
            name: "Flag Name", line1: "Saved Street", line2: "Flat 2", city: "Env City", postalCode: "11111", country: "DE"))
    }

    @Test("the card may come from the environment")
    func cardFromEnvironment() throws {
        let card = try OrderInput().cardDetails(environment: [
            "SHOP_CARD_NUMBER": "4000-0000-0000-0002", "SHOP_CARD_EXP": "03/29", "SHOP_CARD_CVC": "999",
        ])
        #expect(card == CardDetails(cardNumber: "4000000000000002", expMonth: 3, expYear: 2029, cvc: "999"))
    }

    @Test("names every missing address field in one message")
    func missingFields() {
        let input = OrderInput(name: "Ada", city: "London")
        #expect(throws: OrderInput.Problem.self) { try input.address(environment: [:], profile: nil) }
        do {
            _ = try input.address(environment: [:], profile: nil)
        } catch {
            #expect(error.description.hasPrefix("The shipping address needs --line1, --postal-code, --country"))
        }
    }

    @Test(
        "reads expiry dates as MM/YY or MM/YYYY and nothing else",
        arguments: [
            ("12/30", 12, 2030), ("1/27", 1, 2027), ("06/2031", 6, 2031), (" 09/29 ", 9, 2029),
        ])
    func expiry(text: String, month: Int, year: Int) throws {
        let parsed = try #require(OrderInput.parseExpiry(text))
        #expect(parsed.month == month && parsed.year == year)
    }

    @Test("refuses malformed expiry dates", arguments: ["13/30", "00/30", "12/3", "12/300", "1230", "12-30", "ab/cd", "", "/30"])
    func badExpiry(text: String) {
        #expect(OrderInput.parseExpiry(text) == nil)
    }

    @Test("an empty second line is left out")
    func emptyLine2() throws {
        let input = OrderInput(name: "A", line1: "B", line2: "", city: "C", postalCode: "D", country: "us")
        #expect(try input.address(environment: [:], profile: nil).line2 == nil)
    }

    @Test(
        "a card number is 12 to 19 ASCII digits once spaces and dashes are dropped — the rule order-svc enforces",
        arguments: [
            ("4242 4242 4242 4242", "4242424242424242"), ("4000-0000-0000-0002", "4000000000000002"),
            ("424242424242", "424242424242"), ("4242424242424242424", "4242424242424242424"),
            ("42424242424", nil), ("42424242424242424242", nil), ("4242 4242 4242 424x", nil),
            ("4242\u{0664}242424242424", nil), ("4242_4242_4242_4242", nil), ("", nil),
        ] as [(String, String?)])
    func cardNumber(text: String, digits: String?) {
        #expect(CardNumber.digits(of: text) == digits)
        #expect((try? OrderInput.cardNumber(text)) == digits)
    }
}
