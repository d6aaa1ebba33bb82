import ArgumentParser
import Foundation
import ServiceKit

/// The `catalog-svc` executable: products, search, favorites, stock (API.md §4).
struct CatalogCommand: AsyncParsableCommand {
    /// The command's name and help.
    static let configuration = CommandConfiguration(
        commandName: "catalog-svc",
        abstract: "Serves shop.catalog.v1.CatalogService: a searchable catalog with favorites and stock.")

    /// `--host`, `--port`, `--data-dir`, `--log-level`, `--grace-seconds` and the server limits.
    @OptionGroup var options: ServiceOptions

    /// `--database-url`, `--database-password-file`: PostgreSQL instead of SQLite.
    @OptionGroup var database: DatabaseFlags
    /// `--auth-addr`, `--auth-issuer`, `--auth-audience`.
    @OptionGroup var auth: AuthLinkOptions

    // A flag's default must be false (ArgumentParser refuses a switch that is already on), so
    // the environment is read in `catalogConfiguration`.
    /// `--no-seed`: start with an empty catalog.
    @Flag(help: "Start with an empty catalog instead of the built-in one (env SHOP_CATALOG_NO_SEED=1).")
    var noSeed = false
    /// `--no-answer-cache`: read and encode every GetProduct and ListProducts anew.
    @Flag(help: "Keep no answers of GetProduct and ListProducts in memory: read and encode each anew (env SHOP_CATALOG_ANSWER_CACHE=off).")
    var noAnswerCache = false

    /// The configuration the flags describe.
    var catalogConfiguration: CatalogConfiguration {
        var configuration = CatalogConfiguration(dataDirectory: options.dataDir, auth: auth)
        options.apply(to: &configuration, program: "catalog-svc", defaultPort: 7002)
        configuration.databaseURL = database.url
        // validate() has read the file once already; what it refused never gets here.
        configuration.databasePassword = (try? database.password()) ?? nil
        configuration.seed = !(noSeed || ProcessInfo.processInfo.environment["SHOP_CATALOG_NO_SEED"] == "1")
        configuration.keepsAnswers = !(noAnswerCache || ProcessInfo.processInfo.environment["SHOP_CATALOG_ANSWER_CACHE"] == "off")
        return configuration
    }

    /// Builds the server and serves until SIGTERM or SIGINT (``ServiceMain``).
    func run() async throws {
        let configuration = catalogConfiguration
        try await ServiceMain.serve("catalog-svc", options: options) { logger in
            try await CatalogServer.build(configuration: configuration, logger: logger)
        }
    }
}

/// The process entry: ``ServiceMain/main(_:)`` with ``CatalogCommand``.
@main
enum CatalogMain {
    /// Fills closed standard descriptors, then runs ``CatalogCommand``.
    static func main() { ServiceMain.main(CatalogCommand.self) }
}
