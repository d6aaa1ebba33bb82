import ArgumentParser
import Foundation
import ServiceKit
import RPC

/// The `basket-svc` executable: each user's basket, kept in sync live (API.md §5).
struct BasketCommand: AsyncParsableCommand {
    /// The command's name and help.
    static let configuration = CommandConfiguration(
        commandName: "basket-svc",
        abstract: "Serves shop.basket.v1.BasketService: each user's basket, priced by catalog-svc and watched live.")

    private static let environment = ProcessInfo.processInfo.environment

    /// `--host`, `--port`, `--data-dir`, `--log-level`, `--grace-seconds` and the server limits.
    @OptionGroup var options: ServiceOptions

    /// `--database-url`, `--database-password-file`: PostgreSQL instead of SQLite.
    @OptionGroup var database: DatabaseFlags

    /// `--auth-addr`, `--auth-issuer`, `--auth-audience`.
    @OptionGroup var auth: AuthLinkOptions

    /// `--catalog-addr`: where catalog-svc is.
    @OptionGroup var catalog: CatalogLinkOptions

    /// The cap on every catalog call.
    @Option(help: "Longest wait for catalog-svc, in milliseconds, whatever the caller's deadline (env SHOP_CATALOG_TIMEOUT_MS).")
    var catalogTimeoutMs = Int(environment["SHOP_CATALOG_TIMEOUT_MS"] ?? "") ?? 2000

    /// Refuses a malformed timeout before anything starts.
    mutating func validate() throws {
        guard (1...60_000).contains(catalogTimeoutMs) else {
            throw ValidationError("--catalog-timeout-ms must be 1...60000.")
        }
    }

    /// The configuration the flags describe.
    var basketConfiguration: BasketConfiguration {
        var configuration = BasketConfiguration(dataDirectory: options.dataDir)
        options.apply(to: &configuration, program: "basket-svc", defaultPort: 7003)
        configuration.databaseURL = database.url
        // validate() has read the file once already; what it refused never gets here.
        configuration.databasePassword = (try? database.password()) ?? nil
        configuration.authTarget = auth.authTarget
        configuration.authIssuer = auth.authIssuer
        configuration.authAudience = auth.authAudience
        configuration.catalogTarget = catalog.catalogTarget
        configuration.catalogTimeout = .milliseconds(catalogTimeoutMs)
        return configuration
    }

    /// Builds the server and serves until SIGTERM or SIGINT (``ServiceMain``).
    func run() async throws {
        let configuration = basketConfiguration
        try await ServiceMain.serve("basket-svc", options: options) { logger in
            try await BasketServer.build(configuration: configuration, logger: logger)
        }
    }
}

/// The process entry: ``ServiceMain/main(_:)`` with ``BasketCommand``.
@main
enum BasketMain {
    /// Fills closed standard descriptors, then runs ``BasketCommand``.
    static func main() { ServiceMain.main(BasketCommand.self) }
}
