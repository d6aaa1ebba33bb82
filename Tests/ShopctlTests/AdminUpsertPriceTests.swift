import ArgumentParser
import Contracts
import Testing

@testable import shopctl

/// `admin products upsert --price` is read in the currency it is applied in (--currency, else the
/// stored product's, else USD), and a price that currency cannot hold is refused, never skipped.
@Suite("admin products upsert: the price in the currency it is applied in")
struct AdminUpsertPriceTests {
    /// The upsert command `flags` make, parsed and validated as shopctl would.
    private func upsert(_ flags: [String]) throws -> AdminCommand.Products.Upsert {
        let command = try Shopctl.parseAsRoot(["admin", "products", "upsert", "--api-key", "k"] + flags)
        return try #require(command as? AdminCommand.Products.Upsert)
    }

    /// A stored product priced `price`.
    private static func stored(_ price: Money) -> Product {
        Product(
            id: 7, title: "Tea", description: "Green tea.", category: "grocery", price: price,
            image: "https://example.com/tea.png", rating: Rating(rate: 4.5, count: 12), stock: 3)
    }

    @Test(
        "changes the stored product's price, read in the currency it ends up in",
        arguments: [
            (Money(amount: 1000, currency: "JPY"), ["--price", "1200"], Money(amount: 1200, currency: "JPY")),
            (Money(amount: 1000, currency: "KWD"), ["--price", "1.234"], Money(amount: 1234, currency: "KWD")),
            (Money(amount: 1000, currency: "USD"), ["--price", "12.34"], Money(amount: 1234, currency: "USD")),
            (Money(amount: 1000, currency: "USD"), ["--price", "$12"], Money(amount: 1200, currency: "USD")),
            (Money(amount: 1000, currency: "USD"), ["--currency", "jpy", "--price", "1200"], Money(amount: 1200, currency: "JPY")),
            (Money(amount: 1000, currency: "JPY"), ["--currency", "KWD", "--price", "1.234"], Money(amount: 1234, currency: "KWD")),
        ] as [(Money, [String], Money)])
    func changesStoredPrice(price: Money, flags: [String], expected: Money) throws {
        let product = Self.stored(price)
        let updated = try upsert(["--id", "7"] + flags).applied(to: product)
        var wanted = product
        wanted.price = expected
        #expect(updated == wanted, "\(flags)")
    }

    @Test(
        "refuses a price the product's currency cannot hold, naming the currency and its decimals",
        arguments: [
            (Money(amount: 1000, currency: "JPY"), "12.34", ["JPY", "no decimal places"]),
            (Money(amount: 1000, currency: "KWD"), "1.2345", ["KWD", "at most 3 decimal places"]),
            (Money(amount: 1000, currency: "USD"), "12.345", ["USD", "at most 2 decimal places"]),
            (Money(amount: 1000, currency: "JPY"), "$1200", ["'$' marks US dollars", "JPY"]),
            (Money(amount: 1000, currency: "EUR"), " $12.34", ["'$' marks US dollars", "EUR"]),
        ] as [(Money, String, [String])])
    func refusesUnrepresentablePrice(price: Money, text: String, phrases: [String]) throws {
        // The currency is known only once the product is read, so the command line parses.
        let command = try upsert(["--id", "7", "--price", text])
        let error = #expect(throws: ShopctlError.self) { try command.applied(to: Self.stored(price)) }
        #expect(error?.status == .usage)
        for phrase in phrases { #expect(error?.message.contains(phrase) == true, "\(error?.message ?? "no error")") }
    }

    @Test("changing a stored product's currency needs the price in it; the same currency alone changes nothing")
    func currencyNeedsPrice() throws {
        let product = Self.stored(Money(amount: 1234, currency: "USD"))
        let error = #expect(throws: ShopctlError.self) { try upsert(["--id", "7", "--currency", "JPY"]).applied(to: product) }
        #expect(error?.status == .usage)
        #expect(error?.message.contains("--price") == true, "\(error?.message ?? "no error")")
        #expect(try upsert(["--id", "7", "--currency", "usd"]).applied(to: product) == product)
    }

    @Test(
        "a new product's price is read in --currency, else USD",
        arguments: [
            ([], "12.34", Money(amount: 1234, currency: "USD")),
            (["--currency", "JPY"], "1200", Money(amount: 1200, currency: "JPY")),
            (["--currency", "kwd"], "1.234", Money(amount: 1234, currency: "KWD")),
        ] as [([String], String, Money)])
    func newProductPrice(flags: [String], text: String, expected: Money) throws {
        let command = try upsert(["--title", "Tea", "--category", "grocery", "--price", text] + flags)
        let blank = Product(
            title: "", description: "", category: "", price: .zero(currency: "USD"), image: "",
            rating: Rating(rate: 0, count: 0), stock: 0)
        #expect(try command.applied(to: blank).price == expected)
    }

    @Test(
        "refuses at parse time a price that --currency (or USD for a new product) cannot hold",
        arguments: [
            (["--id", "7", "--currency", "JPY", "--price", "12.34"], ["JPY", "no decimal places"]),
            (["--title", "Tea", "--category", "grocery", "--currency", "JPY", "--price", "12.34"], ["JPY", "no decimal places"]),
            (["--title", "Tea", "--category", "grocery", "--price", "1.234"], ["USD", "at most 2 decimal places"]),
            (["--id", "7", "--price", "abc"], ["amount such as 12.34"]),
            (["--id", "7", "--currency", "JPY", "--price", "$1200"], ["'$' marks US dollars", "JPY"]),
            (["--id", "7", "--currency", "US", "--price", "12"], ["three letters", "'US'"]),
            (["--id", "7", "--currency", "USD1", "--price", "12"], ["three letters", "'USD1'"]),
            (["--title", "Tea", "--category", "grocery", "--currency", "€UR", "--price", "12"], ["three letters"]),
            (["--id", "7", "--currency", "$", "--price", "12"], ["three letters"]),
        ] as [([String], [String])])
    func refusesAtParseTime(flags: [String], phrases: [String]) {
        do {
            _ = try upsert(flags)
            Issue.record("\(flags) parsed")
        } catch {
            #expect(Shopctl.exitCode(for: error) == .validationFailure, "\(flags): \(error)")
            let message = Shopctl.message(for: error)
            for phrase in phrases { #expect(message.contains(phrase), "\(flags): \(message)") }
        }
    }
}
