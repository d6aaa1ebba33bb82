import Foundation
import StorefrontKit

/// A whole shopper's journey through StorefrontKit, from a terminal: sign up, verify the email,
/// sign in, browse and search the catalog, favour a product, watch the basket live while adding
/// to it, pay with the test card, see the order, sign out. Each step prints one line; the first
/// failure prints the step and the error and exits 1.
///
///     shopper-journey --gateway http://127.0.0.1:8080 --mail-dir .data/auth-svc/mail
///
/// Against `deploy/compose up`, the verification mail lands in `.data/auth-svc/mail` as an
/// `.eml` file: the journey reads its token there, as a shopper would click the link.
/// `Tests/run` builds it and runs it against a live stack (ShopperJourneyLiveTests).
@main
struct ShopperJourney {
    /// What the command line asked for.
    struct Options {
        /// The gateway's address.
        var gateway = URL(string: "http://127.0.0.1:8080")!
        /// Where auth-svc writes its mails.
        var mailDirectory = ".data/auth-svc/mail"
        /// The account to make; a fresh address when not given.
        var email = "journey-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        /// Its password.
        var password = "journey-Passw0rd!"

        /// Reads `--gateway URL`, `--mail-dir DIR`, `--email ADDRESS`, `--password TEXT`.
        init(_ arguments: [String]) throws(JourneyError) {
            var rest = arguments[...]
            while let flag = rest.popFirst() {
                guard let value = rest.popFirst() else { throw JourneyError.usage("\(flag) needs a value") }
                switch flag {
                case "--gateway":
                    guard let url = URL(string: value), url.scheme != nil else { throw JourneyError.usage("--gateway takes a URL such as http://127.0.0.1:8080") }
                    gateway = url
                case "--mail-dir": mailDirectory = value
                case "--email": email = value
                case "--password": password = value
                default: throw JourneyError.usage("unknown option \(flag)")
                }
            }
        }
    }

    /// Why the journey stopped.
    enum JourneyError: Error, CustomStringConvertible {
        /// The command line was wrong.
        case usage(String)
        /// A step did not see what it should have.
        case unexpected(String)

        var description: String {
            switch self {
            case .usage(let message): "\(message)\nusage: shopper-journey [--gateway URL] [--mail-dir DIR] [--email ADDRESS] [--password TEXT]"
            case .unexpected(let message): message
            }
        }
    }

    static func main() async {
        do {
            let options = try Options(Array(CommandLine.arguments.dropFirst()))
            try await run(options)
            say("journey complete")
        } catch {
            FileHandle.standardError.write(Data("journey failed: \(error)\n".utf8))
            exit(1)
        }
    }

    /// Runs every step against the gateway `options` names.
    static func run(_ options: Options) async throws {
        let client = StorefrontClient(baseURL: options.gateway)
        defer { Task { await client.close() } }

        try await step("sign up \(options.email)") {
            let user = try await client.auth.signUp(email: options.email, password: options.password)
            return "user \(user.id), email not verified yet"
        }
        try await step("verify the email") {
            let token = try await verificationToken(to: options.email, in: options.mailDirectory)
            let user = try await client.auth.verifyEmail(token: token)
            return "verified: \(user.emailVerified)"
        }
        try await step("sign in") {
            let user = try await client.auth.signIn(email: options.email, password: options.password)
            return "signed in as \(user.email)"
        }

        let categories = try await step("categories") {
            let categories = try await client.catalog.categories()
            guard !categories.isEmpty else { throw JourneyError.unexpected("the catalog has no categories") }
            return (categories, categories.map { "\($0.name) (\($0.productCount))" }.joined(separator: ", "))
        }
        let product = try await step("first page of \(categories[0].name)") {
            var pages = client.catalog.products(category: categories[0].name, pageSize: 5).makeAsyncIterator()
            guard let page = try await pages.next(), let first = page.products.first else {
                throw JourneyError.unexpected("no products in \(categories[0].name)")
            }
            return (first, page.products.map(\.title).joined(separator: "; "))
        }
        let word = product.title.split(separator: " ").first.map(String.init) ?? product.title
        try await step("search \"\(word)\"") {
            var pages = client.catalog.search(word, pageSize: 5).makeAsyncIterator()
            let hits = try await pages.next()?.products ?? []
            guard hits.contains(where: { $0.id == product.id }) else { throw JourneyError.unexpected("\"\(word)\" did not find \(product.title)") }
            return "\(hits.count) hit(s), \(product.title) among them"
        }
        try await step("favour \(product.title)") {
            try await client.catalog.addFavorite(productID: product.id)
            let page = try await client.catalog.productPage(id: product.id)
            guard page.isFavorite else { throw JourneyError.unexpected("the product page does not show the favourite") }
            return "a favourite now"
        }

        try await step("add it to the basket, watching the basket live") {
            let watch = Task { () -> Basket? in
                for try await basket in client.basket.changes where basket.items.contains(where: { $0.productId == product.id }) {
                    return basket
                }
                return nil
            }
            let added = try await client.basket.add(productID: product.id, count: 2)
            let seen = try await withDeadline(.seconds(10)) { try await watch.value }
            watch.cancel()
            guard let seen else { throw JourneyError.unexpected("the basket's changes ended without the new line") }
            return "the watch saw version \(seen.version): \(seen.itemCount) item(s), total \(format(seen.total)) (answer: version \(added.version))"
        }

        let order = try await step("place the order with the test card") {
            let order = try await client.orders.place(
                address: Address(name: "Journey Shopper", line1: "1 Test Street", city: "Testville", postalCode: "12345", country: "US"),
                payment: CardDetails(cardNumber: "4242424242424242", expMonth: 12, expYear: 2030, cvc: "123"))
            guard order.status == .paid else { throw JourneyError.unexpected("the order is \(order.status.rawValue), not PAID") }
            return (order, "order \(order.id): \(order.status.rawValue), \(format(order.total))")
        }
        try await step("the basket after paying") {
            let basket = try await client.basket.current()
            guard basket.items.isEmpty else { throw JourneyError.unexpected("the basket still holds \(basket.items.count) line(s)") }
            return "empty"
        }
        try await step("my orders") {
            var pages = client.orders.orders(pageSize: 10).makeAsyncIterator()
            let orders = try await pages.next() ?? []
            guard orders.first?.id == order.id else { throw JourneyError.unexpected("the newest order is not \(order.id)") }
            return "\(orders.count) order(s), newest \(order.id)"
        }
        try await step("sign out") {
            try await client.auth.signOut()
            return client.auth.currentUser == nil ? "signed out" : "still signed in?"
        }
    }

    /// Writes `line` to standard output at once (not held in a buffer), so each step shows as it
    /// ends, also when the output goes to a pipe or a file.
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// Runs one step, printing its name and what it returned; a failure names the step.
    @discardableResult
    static func step<Value>(_ name: String, _ body: () async throws -> (Value, String)) async throws -> Value {
        do {
            let (value, summary) = try await body()
            say("✓ \(name): \(summary)")
            return value
        } catch {
            throw JourneyError.unexpected("\(name): \(error)")
        }
    }

    /// ``step(_:_:)-…`` for a step with nothing to hand on.
    static func step(_ name: String, _ body: () async throws -> String) async throws {
        try await step(name) { ((), try await body()) }
    }

    /// The token of the newest verification mail to `email` in `directory`, waiting up to 10 s
    /// for it (auth-svc's outbox delivers a moment after the sign-up).
    static func verificationToken(to email: String, in directory: String) async throws -> String {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            let tokens = files.filter { $0.hasSuffix(".eml") }.sorted().compactMap { name -> String? in
                guard let text = try? String(contentsOfFile: "\(directory)/\(name)", encoding: .utf8) else { return nil }
                let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
                // auth-svc names what a mail is for in X-Storefront-Kind; its body carries the link's token on a line of its own.
                guard lines.contains("X-Storefront-Kind: verify-email"), lines.contains(where: { $0.hasPrefix("To:") && $0.contains(email) }) else { return nil }
                return lines.first { $0.hasPrefix("Token:") }.map { $0.dropFirst("Token:".count).trimmingCharacters(in: .whitespaces) }
            }
            if let token = tokens.last { return token }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw JourneyError.unexpected("no verification mail to \(email) in \(directory) within 10 s (is --mail-dir auth-svc's mail folder?)")
    }

    /// `body`'s value, or a failure once `limit` passes.
    static func withDeadline<Value: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async throws -> Value) async throws -> Value {
        try await withThrowingTaskGroup(of: Value?.self) { group in
            group.addTask { try await body() }
            group.addTask { try await Task.sleep(for: limit); return nil }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                throw JourneyError.unexpected("nothing within \(limit)")
            }
            return value
        }
    }

    /// `money` as the shop shows it, e.g. "USD 12.50".
    static func format(_ money: Money) -> String {
        "\(money.currency) \(money.amount / 100).\(String(format: "%02d", money.amount % 100))"
    }
}
