import ArgumentParser
import Contracts
import RPC

/// `shopctl favorites …`: the signed-in user's favorite products.
struct FavoritesCommand: AsyncParsableCommand {
    /// The subcommands.
    static let configuration = CommandConfiguration(
        commandName: "favorites", abstract: "Mark, unmark and list favorite products.",
        discussion: """
            Examples:
              shopctl favorites add 3
              shopctl favorites list
              shopctl favorites remove 3
            """,
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
            try await global.call(CatalogContract.addFavorite, AddFavoriteRequest(productId: product)) { _ in
                "Product \(product) is a favorite."
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
            try await global.call(CatalogContract.removeFavorite, RemoveFavoriteRequest(productId: product)) { _ in
                "Product \(product) is no longer a favorite."
            }
        }
    }

    /// `favorites list`.
    struct List: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List favorites, newest first.")

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions
        /// `--page-size`, `--page-token`.
        @OptionGroup var paging: PageOptions

        /// Makes the call and prints the answer.
        func run() async throws {
            let request = ListFavoritesRequest(pageSize: paging.pageSize, pageToken: paging.pageToken)
            let next = nextCommand
            try await global.call(CatalogContract.listFavorites, request) { HumanText.favorites($0, command: next) }
        }

        /// The command that prints the next page: this one with the same page size.
        var nextCommand: String { paging.nextPageCommand("shopctl favorites list") }
    }
}
