import ArgumentParser
import Contracts
import Foundation
import RPC

/// `shopctl order …`: place, list, show and cancel orders.
struct OrderCommand: AsyncParsableCommand {
    /// The subcommands.
    static let configuration = CommandConfiguration(
        commandName: "order", abstract: "Order the basket, and see or cancel orders.",
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
        /// The card number.
        @Option(help: "Card number (test cards: 4242424242424242 pays, 4000000000000002 is declined).") var card: String?
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
            let profile = try ShippingProfile(paths: ConfigPaths()).load()
            do {
                return try input.request(environment: ProcessContext.current.environment, profile: profile)
            } catch {
                throw ValidationError(error.description)
            }
        }

        /// Refuses bad values before anything is sent.
        func validate() throws {
            _ = try request()
        }

        /// Makes the call and prints the answer.
        func run() async throws {
            let request = try request()
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
        @Argument(help: "The order id.") var id: String

        /// Makes the call and prints the answer.
        func run() async throws {
            try await global.call(OrderContract.getOrder, GetOrderRequest(id: id), printing: HumanText.order)
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
        @Argument(help: "The order id.") var id: String

        /// Makes the call and prints the answer.
        func run() async throws {
            try await global.call(OrderContract.cancelOrder, CancelOrderRequest(id: id), printing: HumanText.order)
        }
    }
}
