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

        /// Makes the call and prints the answer.
        func run() async throws {
            let request = ListProductsRequest(
                category: category, query: search, sort: sort?.sort, pageSize: paging.pageSize,
                pageToken: paging.pageToken)
            let next = nextCommand
            try await global.call(CatalogContract.listProducts, request) { HumanText.productPage($0, command: next) }
        }

        /// The command that prints the next page: this one with the same filters and page size.
        var nextCommand: String {
            var words = ["shopctl products list"]
            if let category { words.append("--category \(ShellWord.quoted(category))") }
            if let search { words.append("--search \(ShellWord.quoted(search))") }
            if let sort { words.append("--sort \(sort.sort.rawValue)") }
            return paging.nextPageCommand(words.joined(separator: " "))
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
