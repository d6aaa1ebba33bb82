import ArgumentParser
import Contracts
import RPC
import Foundation

/// `shopctl basket …`: the signed-in user's basket.
struct BasketCommand: AsyncParsableCommand {
    /// The subcommands.
    static let configuration = CommandConfiguration(
        commandName: "basket", abstract: "Show and change the basket, or watch it change live.",
        subcommands: [Show.self, Add.self, SetCount.self, Remove.self, Clear.self, Watch.self])

    /// The full id of the basket line that `item` names: a whole item id, or a unique prefix
    /// of one (as `basket show` prints them), looked up in the current basket.
    static func resolveItem(_ item: String, context: CommandContext) async throws -> String {
        if UUID(uuidString: item) != nil { return item }
        let basket = try await context.gateway.unary(BasketContract.getBasket, Empty()).message
        return try matchItem(item, in: basket)
    }

    /// The id of the one line of `basket` whose id starts with `prefix` (ignoring case).
    static func matchItem(_ prefix: String, in basket: Basket) throws(ShopctlError) -> String {
        let matches = basket.items.filter { $0.id.lowercased().hasPrefix(prefix.lowercased()) }
        switch matches.count {
        case 1:
            return matches[0].id
        case 0:
            throw ShopctlError(
                .rejected, reason: "ITEM_NOT_FOUND", "No line of your basket has an id starting with \(prefix).",
                hint: "see the item ids with `shopctl basket show`")
        default:
            throw ShopctlError.usage(
                "\(matches.count) lines of your basket have ids starting with \(prefix).", hint: "give more of the id")
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
        @Argument(help: "The item id, or a unique prefix of it (see `shopctl basket show`).") var item: String
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
        @Argument(help: "The item id, or a unique prefix of it (see `shopctl basket show`).") var item: String

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
