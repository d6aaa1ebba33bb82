import ArgumentParser
import ContractTesting
import Contracts
import RPCHTTP2
@testable import shopctl
import Testing

/// shopctl's real commands (parsed and run as the executable does, `--json`) against the
/// gateway played from shopctl's contract. Commands that need stored credentials are not
/// covered here: they read the credentials file of the user running the tests.
@Suite("shopctl as a consumer")
struct ShopctlConsumerTests {
    /// Parses `arguments` as the command line and runs the command against `gateway`.
    static func run(_ arguments: [String], gateway: SocketAddressText) async throws {
        let command = try Shopctl.parseAsRoot(
            GlobalOptions.hoisted(arguments + ["--gateway", gateway.description, "--json"]))
        guard var runnable = command as? any AsyncParsableCommand else {
            Issue.record("\(arguments) is not an async command")
            return
        }
        try await runnable.run()
    }

    @Test("each catalog command makes the call its interaction describes", arguments: [
        (["products", "show", "7"], "GetProduct for products show"),
        (["products", "list", "--category", "bags", "--page-size", "5"], "ListProducts for products list in a category"),
        (["categories"], "ListCategories for categories"),
    ])
    func catalogCommand(arguments: [String], interaction: String) async throws {
        let spec = try #require(try ShopctlInteractions.all().first { $0.description == interaction })
        try await MockProviders.run(consumer: "shopctl", serving: ["gateway": [spec]]) { mocks in
            try await Self.run(arguments, gateway: mocks["gateway"])
        }
    }
}
