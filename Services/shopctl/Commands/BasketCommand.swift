import ArgumentParser
import Contracts
import RPC
import Foundation

/// `shopctl basket …`: the signed-in user's basket.
struct BasketCommand: AsyncParsableCommand {
    /// The subcommands.
    static let configuration = CommandConfiguration(
        commandName: "basket", abstract: "Show and change the basket, or watch it change live.",
        discussion: """
            A line is named by its product id or its item id (or the item id's first characters, \
            as `basket show` prints them).

            Examples:
              shopctl basket add 3 --count 2
              shopctl basket set 3 5
              shopctl basket remove 3
              shopctl basket show
            """,
        subcommands: [Show.self, Add.self, SetCount.self, Remove.self, Clear.self, Watch.self])

    /// What ITEM may be, for the help of `set` and `remove`.
    static let itemHelp = "The line: its product id, or its item id or a unique prefix of that (see `shopctl basket show`)."

    /// The full id of the basket line that `reference` names: an item id (a UUID) as it is;
    /// otherwise looked up in the current basket (``matchItem(_:in:)``).
    static func resolveItem(_ reference: String, context: CommandContext) async throws -> String {
        if UUID(uuidString: reference) != nil { return reference }
        let basket = try await context.gateway.unary(BasketContract.getBasket, Empty()).message
        return try matchItem(reference, in: basket)
    }

    /// The id of the line of `basket` that `reference` names. A whole number is a product id:
    /// the line of that product (a product has one line at most). Anything else — and a number
    /// of ``HumanText/itemIDPrefix`` digits or more that no line's product has, since an item id
    /// as `basket show` cuts it may be all digits — is a unique prefix of an item id, any case.
    static func matchItem(_ reference: String, in basket: Basket) throws(ShopctlError) -> String {
        let isNumber = !reference.isEmpty && reference.allSatisfy(\.isASCIIDigit)
        if isNumber, let product = Int(reference), let line = basket.items.first(where: { $0.productId == product }) {
            return line.id
        }
        if isNumber && reference.count < HumanText.itemIDPrefix {
            throw ShopctlError(
                .rejected, reason: "ITEM_NOT_FOUND", "Product \(reference) is not in your basket.",
                hint: "add it with `shopctl basket add \(reference)`; see what is in it with `shopctl basket show`")
        }
        let matches = basket.items.filter { $0.id.lowercased().hasPrefix(reference.lowercased()) }
        switch matches.count {
        case 1:
            return matches[0].id
        case 0:
            let what = isNumber ? "a product id or the start of an item id" : "the start of an item id"
            throw ShopctlError(
                .rejected, reason: "ITEM_NOT_FOUND", "No line of your basket has \(reference) as \(what).",
                hint: "see the product and item ids with `shopctl basket show`")
        default:
            let ids = matches.prefix(3).map(\.id).joined(separator: ", ") + (matches.count > 3 ? ", …" : "")
            throw ShopctlError.usage(
                "\(matches.count) lines of your basket have ids starting with \(reference): \(ids).",
                hint: "give more of the id")
        }
    }
}

extension BasketCommand {
    /// `basket show`.
    struct Show: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Show the basket.")

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions

        /// Makes the call and prints the answer.
        func run() async throws {
            try await global.call(BasketContract.getBasket, Empty(), printing: HumanText.basket)
        }
    }

    /// `basket add PRODUCT`.
    struct Add: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Add a product as a new line.")

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions
        /// The product id.
        @Argument(help: "The product id.") var product: Int
        /// How many units.
        @Option(parsing: .unconditional, help: "How many units, 1 to 10.") var count = 1

        /// Refuses bad values before anything is sent.
        func validate() throws {
            guard BasketContract.countRange.contains(count) else { throw ValidationError("--count must be 1 to 10.") }
        }

        /// Makes the call and prints the answer.
        func run() async throws {
            try await global.call(
                BasketContract.addItem, AddItemRequest(productId: product, count: count), printing: HumanText.basket)
        }
    }

    /// `basket set ITEM COUNT`.
    struct SetCount: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(
            commandName: "set", abstract: "Set a line's count; 0 removes the line.")

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions
        /// The line.
        @Argument(help: ArgumentHelp(BasketCommand.itemHelp)) var item: String
        /// The new count.
        @Argument(help: "The new count, 0 to 10.") var count: Int

        /// Refuses bad values before anything is sent.
        func validate() throws {
            guard (0...BasketContract.countRange.upperBound).contains(count) else {
                throw ValidationError("COUNT must be 0 to 10 (0 removes the line).")
            }
        }

        /// Makes the call and prints the answer.
        func run() async throws {
            try await global.call(
                BasketContract.updateItemCount,
                request: { UpdateItemCountRequest(itemId: try await BasketCommand.resolveItem(item, context: $0), count: count) },
                printing: HumanText.basket)
        }
    }

    /// `basket remove ITEM`.
    struct Remove: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove a line.")

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions
        /// The line.
        @Argument(help: ArgumentHelp(BasketCommand.itemHelp)) var item: String

        /// Makes the call and prints the answer.
        func run() async throws {
            try await global.call(
                BasketContract.removeItem,
                request: { RemoveItemRequest(itemId: try await BasketCommand.resolveItem(item, context: $0)) },
                printing: HumanText.basket)
        }
    }

    /// `basket clear`.
    struct Clear: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(commandName: "clear", abstract: "Remove every line.")

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions

        /// Makes the call and prints the answer.
        func run() async throws {
            try await global.call(BasketContract.clearBasket, ClearBasketRequest(), printing: HumanText.basket)
        }
    }

    /// `basket watch`.
    struct Watch: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(
            commandName: "watch", abstract: "Print the basket, then again after every change, until Ctrl-C.")

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions

        /// Makes the call and prints the answer.
        func run() async throws {
            try await global.watch(BasketContract.watchBasket, Empty()) { HumanText.basketUpdate($0) }
        }
    }
}
