import ArgumentParser
import Contracts
import RPC

/// `shopctl categories`: the catalog's categories.
struct CategoriesCommand: AsyncParsableCommand {
    /// The command's name and help.
    static let configuration = CommandConfiguration(
        commandName: "categories", abstract: "List the categories and how many products each has.")

    /// `--gateway`, `--json`, `--timeout`.
    @OptionGroup var global: GlobalOptions

    /// Makes the call and prints the answer.
    func run() async throws {
        try await global.call(CatalogContract.listCategories, Empty()) { HumanText.categories($0.categories) }
    }
}
