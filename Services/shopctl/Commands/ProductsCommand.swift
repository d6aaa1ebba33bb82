import ArgumentParser
import Contracts
import RPC
import Foundation

/// `shopctl products …`: browse and search the catalog.
struct ProductsCommand: AsyncParsableCommand {
    /// The subcommands.
    static let configuration = CommandConfiguration(
        commandName: "products", abstract: "List, search and show products.", subcommands: [List.self, Show.self])
}

/// The `--sort` values: the wire names of `ProductSort`, in any case (`price_asc`, `RATING`).
struct SortArgument: ExpressibleByArgument, Sendable {
    /// The order.
    let sort: ProductSort

    /// Parses a wire name, ignoring case and taking "-" for "_".
    init?(argument: String) {
        guard let sort = ProductSort(rawValue: argument.uppercased().replacingOccurrences(of: "-", with: "_")) else {
            return nil
        }
        self.sort = sort
    }

    /// Every value, for `--help`.
    static var allValueStrings: [String] { ProductSort.allCases.map(\.rawValue) }
}

extension ProductsCommand {
    /// `products list`.
    struct List: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List products, optionally in one category or matching a search.")

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions
        /// Only this category.
        @Option(help: "Only products of this category (see `shopctl categories`).") var category: String?
        /// Full-text search.
        @Option(help: "Search titles and descriptions (prefix matching).") var search: String?
        /// The order.
        @Option(help: "Order: RELEVANCE, PRICE_ASC, PRICE_DESC or RATING.") var sort: SortArgument?
        /// `--page-size`, `--page-token`.
        @OptionGroup var paging: PageOptions

        /// Makes the call and prints the answer. When nothing matches, a category the catalog
        /// does not have is the reason, and is said so (`UNKNOWN_CATEGORY`, exit 4) rather than
        /// "No products match." — one more call, made only for an empty answer.
        func run() async throws {
            let request = ListProductsRequest(
                category: category, query: search, sort: sort?.sort, pageSize: paging.pageSize,
                pageToken: paging.pageToken)
            try await global.withContext { context in
                let reply = try await context.gateway.unary(CatalogContract.listProducts, request)
                if reply.message.products.isEmpty, let category, !category.isEmpty {
                    try await checkCategory(category, on: context.gateway)
                }
                context.output.message(reply.raw) {
                    HumanText.productPage(reply.message, command: nextCommand, searching: { command(search: $0) })
                }
            }
        }

        /// The command that prints the next page: this one with the same filters and page size.
        var nextCommand: String { command() }

        /// This command with the same sort and page size, and the same category and search
        /// unless others are given.
        func command(category: String? = nil, search: String? = nil) -> String {
            var words = ["shopctl products list"]
            if let category = category ?? self.category { words.append("--category \(ShellWord.quoted(category))") }
            if let search = search ?? self.search { words.append("--search \(ShellWord.quoted(search))") }
            if let sort { words.append("--sort \(sort.sort.rawValue)") }
            return paging.nextPageCommand(words.joined(separator: " "))
        }

        /// Throws `UNKNOWN_CATEGORY` (exit 4) when `category` is none of the catalog's
        /// categories (compared ignoring case, as `ListProducts` filters), suggesting the
        /// closest one when one is close.
        func checkCategory(_ category: String, on gateway: GatewayClient) async throws {
            let names = try await gateway.unary(CatalogContract.listCategories, Empty()).message.categories.map(\.name)
            guard !names.contains(where: { $0.lowercased() == category.lowercased() }) else { return }
            guard let closest = ClosestMatch.best(for: category, among: names) else {
                throw ShopctlError(
                    .rejected, reason: "UNKNOWN_CATEGORY", "No category '\(category)'.", hint: "see `shopctl categories`")
            }
            throw ShopctlError(
                .rejected, reason: "UNKNOWN_CATEGORY", "No category '\(category)'. Did you mean '\(closest)'?",
                hint: "run `\(command(category: closest))`")
        }
    }

    /// `products show ID`.
    struct Show: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Show one product in full.")

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions
        /// The product id.
        @Argument(help: "The product id.") var id: Int

        /// Makes the call and prints the answer.
        func run() async throws {
            try await global.call(CatalogContract.getProduct, GetProductRequest(id: id)) { HumanText.product($0.product) }
        }
    }
}
