import ArgumentParser
import Contracts
import RPC

/// `shopctl favorites …`: the signed-in user's favorite products.
struct FavoritesCommand: AsyncParsableCommand {
    /// The subcommands.
    static let configuration = CommandConfiguration(
        commandName: "favorites", abstract: "Mark, unmark and list favorite products.",
        subcommands: [Add.self, Remove.self, List.self])
}

extension FavoritesCommand {
    /// `favorites add PRODUCT`.
    struct Add: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Mark a product as a favorite.")

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions
        /// The product id.
        @Argument(help: "The product id.") var product: Int

        /// Makes the call and prints the answer.
        func run() async throws {
            try await global.withContext { context in
                let reply = try await context.gateway.unary(CatalogContract.addFavorite, AddFavoriteRequest(productId: product))
                context.output.message(reply.raw) { "Product \(product) is a favorite." }
            }
        }
    }

    /// `favorites remove PRODUCT`.
    struct Remove: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Unmark a favorite.")

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions
        /// The product id.
        @Argument(help: "The product id.") var product: Int

        /// Makes the call and prints the answer.
        func run() async throws {
            try await global.withContext { context in
                let reply = try await context.gateway.unary(
                    CatalogContract.removeFavorite, RemoveFavoriteRequest(productId: product))
                context.output.message(reply.raw) { "Product \(product) is no longer a favorite." }
            }
        }
    }

    /// `favorites list`.
    struct List: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List favorites, newest first.")

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions
        /// The page size.
        @Option(help: "Products per page, 1 to 100 (default 20).") var pageSize: Int?
        /// The page to show.
        @Option(help: "The page token a previous page printed.") var pageToken: String?

        /// Refuses bad values before anything is sent.
        func validate() throws {
            if let pageSize, !(1...100).contains(pageSize) { throw ValidationError("--page-size must be 1 to 100.") }
        }

        /// Makes the call and prints the answer.
        func run() async throws {
            try await global.withContext { context in
                let reply = try await context.gateway.unary(
                    CatalogContract.listFavorites, ListFavoritesRequest(pageSize: pageSize, pageToken: pageToken))
                context.output.message(reply.raw) { HumanText.favorites(reply.message) }
            }
        }
    }
}
