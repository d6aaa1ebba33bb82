import ArgumentParser
import Contracts
import Foundation
import RPC

/// `shopctl order …`: place, list, show and cancel orders.
struct OrderCommand: AsyncParsableCommand {
    /// The subcommands.
    static let configuration = CommandConfiguration(
        commandName: "order", abstract: "Order the basket, and see or cancel orders.",
        discussion: """
            An order is named by its id or the id's first 8 or more characters.

            Examples:
              shopctl order place --name "Ada Lovelace" --line1 "12 Analytical Row" \\
                  --city London --postal-code "N1 9GU" --country GB --exp 12/30 --cvc 123
              shopctl order list
              shopctl order show 56edd6eb
              shopctl order cancel 56edd6eb
            """,
        subcommands: [Place.self, List.self, Show.self, Cancel.self])

    /// Places an order with one idempotency key for the whole invocation: every retry (after
    /// `UNAVAILABLE`, a deadline, `REQUEST_IN_PROGRESS` or a token refresh) sends the same
    /// key, so the order is placed and charged at most once however often it is sent.
    static func place(
        _ request: PlaceOrderRequest, gateway: GatewayClient, key: String = UUID().uuidString
    ) async throws -> Reply<Order> {
        var metadata = Metadata()
        metadata.set(OrderContract.idempotencyKeyHeader, key)
        return try await gateway.unary(OrderContract.placeOrder, request, metadata: metadata, retry: .placeOrder)
    }

    /// What ID may be, for the help of `show` and `cancel`.
    static let idHelp = "The order id, or a unique start of it of 8 characters or more (see `shopctl order list`)."

    /// How many characters an order id prefix needs at least: the same as an item id's
    /// (``HumanText/itemIDPrefix``, what `basket show` gives), few enough to type, too many to
    /// match by accident.
    static var minimumPrefix: Int { HumanText.itemIDPrefix }
    /// The page size of the search for a prefix (the most `ListOrders` gives at once).
    static let searchPageSize = 100
    /// How many pages the search reads at most: the newest 5,000 orders, so that a prefix never
    /// costs more than a bounded number of calls.
    static let searchPageLimit = 50
    /// How many of the newest orders the search reads at most.
    static var searchLimit: Int { searchPageLimit * searchPageSize }

    /// The full id of the order `reference` names: a whole order id (a UUID) as it is, else a
    /// unique prefix of at least ``minimumPrefix`` characters (any case) of one of the caller's
    /// newest orders, found through `ListOrders`. The search stops at the second match (the
    /// prefix is ambiguous whatever later pages hold) and after ``searchPageLimit`` pages.
    static func resolveOrder(_ reference: String, gateway: GatewayClient) async throws -> String {
        if UUID(uuidString: reference) != nil { return reference }
        guard reference.count >= minimumPrefix else {
            throw ShopctlError.usage(
                "An order id, or the start of one, needs at least \(minimumPrefix) characters (got '\(reference)').",
                hint: "see your orders' ids with `shopctl order list`")
        }
        let prefix = reference.lowercased()
        var matches: [String] = []
        var token: String?
        for _ in 0..<searchPageLimit {
            let page = try await gateway.unary(
                OrderContract.listOrders, ListOrdersRequest(pageSize: searchPageSize, pageToken: token)).message
            matches += page.orders.map(\.id).filter { $0.lowercased().hasPrefix(prefix) }
            guard !page.nextPageToken.isEmpty else { return try single(matches, prefix: reference, complete: true) }
            if matches.count > 1 { break }
            token = page.nextPageToken
        }
        return try single(matches, prefix: reference, complete: false)
    }

    /// The one id of `matches` (the orders whose ids start with `prefix`); an error saying
    /// there is none, or how many there are. `complete` says whether every order was searched;
    /// when not, the counts are "at least" and a miss says only the newest were searched.
    static func single(_ matches: [String], prefix: String, complete: Bool) throws(ShopctlError) -> String {
        switch matches.count {
        case 1:
            return matches[0]
        case 0 where complete:
            throw ShopctlError(
                .rejected, reason: OrderReason.orderNotFound.rawValue,
                "None of your orders has an id starting with \(prefix).", hint: "see your orders with `shopctl order list`")
        case 0:
            throw ShopctlError(
                .rejected, reason: OrderReason.orderNotFound.rawValue,
                "None of your newest \(searchLimit) orders has an id starting with \(prefix); older ones were not searched.",
                hint: "give the whole id of an older order")
        default:
            throw ShopctlError.usage(
                "\(complete ? "" : "At least ")\(matches.count) of your orders have ids starting with \(prefix).",
                hint: "give more of the id")
        }
    }
}

extension OrderCommand {
    /// `order place`.
    struct Place: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(
            commandName: "place", abstract: "Order everything in the basket and pay by card.",
            discussion: """
                Each address field falls back to SHOP_SHIP_NAME, SHOP_SHIP_LINE1, SHOP_SHIP_LINE2, SHOP_SHIP_CITY,
                SHOP_SHIP_POSTAL_CODE or SHOP_SHIP_COUNTRY, then to the profile saved with --save-profile; the card
                to SHOP_CARD_NUMBER, SHOP_CARD_EXP and SHOP_CARD_CVC.
                """)

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions
        /// The recipient.
        @Option(help: "Recipient's name.") var name: String?
        /// The first address line.
        @Option(help: "Street address.") var line1: String?
        /// The second address line.
        @Option(help: "Apartment, suite… (optional).") var line2: String?
        /// The city.
        @Option(help: "City.") var city: String?
        /// The postal code.
        @Option(help: "Postal code.") var postalCode: String?
        /// The country code.
        @Option(help: "Two-letter country code, e.g. US.") var country: String?
        /// The card number; best left out, to be typed at the prompt.
        @Option(
            help: """
                Card number; best left out: without it or SHOP_CARD_NUMBER it is asked for at a prompt that does \
                not show it, or read with --card-stdin, and stays out of the process list and shell history \
                (test cards: 4242424242424242 pays, 4000000000000002 is declined).
                """)
        var card: String?
        /// Whether to read the card number from standard input.
        @Flag(help: "Read the card number from standard input (its first line) instead of prompting.")
        var cardStdin = false
        /// The expiry.
        @Option(help: "Card expiry as MM/YY.") var exp: String?
        /// The card verification code.
        @Option(help: "Card security code.") var cvc: String?
        /// Whether to save the address as the profile.
        @Flag(help: "Save the shipping address (never the card) to profile.json for next time.") var saveProfile = false

        /// The flags as order inputs.
        var input: OrderInput {
            OrderInput(
                name: name, line1: line1, line2: line2, city: city, postalCode: postalCode, country: country, card: card,
                expiry: exp, cvc: cvc)
        }

        /// The request from the flags, the environment and the saved profile.
        func request() throws -> PlaceOrderRequest {
            try request(input)
        }

        /// The request from `input`, the environment and the saved profile.
        func request(_ input: OrderInput) throws -> PlaceOrderRequest {
            let profile = try ShippingProfile(paths: global.paths).load()
            do {
                return try input.request(environment: ProcessContext.current.environment, profile: profile)
            } catch {
                throw ValidationError(error.description)
            }
        }

        /// Refuses bad values before anything is sent or asked for: everything but a card
        /// number still to be typed or piped in.
        func validate() throws {
            let environment = ProcessContext.current.environment
            if cardStdin && input.givenCardNumber(environment: environment) != nil {
                throw ValidationError("--card-stdin reads the card number: leave out --card and SHOP_CARD_NUMBER.")
            }
            guard input.givenCardNumber(environment: environment) == nil else { return _ = try request(input) }
            let profile = try ShippingProfile(paths: global.paths).load()
            do {
                _ = try input.address(environment: environment, profile: profile)
                _ = try input.expiryAndCode(environment: environment)
            } catch {
                throw ValidationError(error.description)
            }
        }

        /// `input` with the card number it lacks: the first line of standard input with
        /// --card-stdin, else typed at a prompt without echo.
        func completed(_ input: OrderInput) throws -> OrderInput {
            guard input.givenCardNumber(environment: ProcessContext.current.environment) == nil else { return input }
            var reader = PasswordReader(fromStandardInput: cardStdin, noun: "card number", flag: "--card-stdin")
            var completed = input
            completed.card = try reader.read(prompt: "Card number")
            return completed
        }

        /// Makes the call and prints the answer.
        func run() async throws {
            let request = try request(try completed(input))
            try await global.withContext { context in
                if saveProfile { try ShippingProfile(paths: context.paths).save(request.shippingAddress) }
                let reply = try await OrderCommand.place(request, gateway: context.gateway)
                context.output.message(reply.raw) { HumanText.order(reply.message) }
            }
        }
    }

    /// `order list`.
    struct List: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List orders, newest first.")

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions
        /// `--page-size`, `--page-token`.
        @OptionGroup var paging: PageOptions

        /// Makes the call and prints the answer.
        func run() async throws {
            let request = ListOrdersRequest(pageSize: paging.pageSize, pageToken: paging.pageToken)
            let next = nextCommand
            try await global.call(OrderContract.listOrders, request) { HumanText.orders($0, command: next) }
        }

        /// The command that prints the next page: this one with the same page size.
        var nextCommand: String { paging.nextPageCommand("shopctl order list") }
    }

    /// `order show ID`.
    struct Show: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Show one order in full.")

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions
        /// The order id.
        @Argument(help: ArgumentHelp(OrderCommand.idHelp)) var id: String

        /// Makes the call and prints the answer.
        func run() async throws {
            try await global.call(
                OrderContract.getOrder,
                request: { GetOrderRequest(id: try await OrderCommand.resolveOrder(id, gateway: $0.gateway)) },
                printing: HumanText.order)
        }
    }

    /// `order cancel ID`.
    struct Cancel: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(
            commandName: "cancel", abstract: "Cancel a paid order: refund the card and give the stock back.")

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions
        /// The order id.
        @Argument(help: ArgumentHelp(OrderCommand.idHelp)) var id: String

        /// Makes the call and prints the answer.
        func run() async throws {
            try await global.call(
                OrderContract.cancelOrder,
                request: { CancelOrderRequest(id: try await OrderCommand.resolveOrder(id, gateway: $0.gateway)) },
                printing: HumanText.order)
        }
    }
}
