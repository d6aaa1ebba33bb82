import ArgumentParser
import Foundation
import Logging
import RPCHTTP2
import ServiceKit

/// The `basket-svc` executable: each user's basket, kept in sync live (API.md §5).
@main
struct BasketServiceCommand: AsyncParsableCommand {
    /// The command's name and help.
    static let configuration = CommandConfiguration(
        commandName: "basket-svc",
        abstract: "Serves shop.basket.v1.BasketService: each user's basket, priced by catalog-svc and watched live.")

    private static let environment = ProcessInfo.processInfo.environment

    /// `--host`, `--port`, `--data-dir`, `--log-level`, `--grace-seconds`.
    @OptionGroup var options: ServiceOptions

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

    /// Builds the server and serves until SIGTERM or SIGINT; exits 78 (EX_CONFIG) when it cannot start.
    func run() async throws {
        ServiceRunner.bootstrapLogging(options)
        let logger = Logger(label: "basket-svc")
        var configuration = BasketConfiguration(dataDirectory: options.dataDir)
        configuration.host = options.host
        configuration.port = options.resolvedPort(default: 7003)
        configuration.authAddress = auth.authAddress
        configuration.authIssuer = auth.authIssuer
        configuration.authAudience = auth.authAudience
        configuration.catalogAddress = catalog.catalogAddress
        configuration.catalogTimeout = .milliseconds(catalogTimeoutMs)
        configuration.gracePeriod = .seconds(options.graceSeconds)
        configuration.serverLimits = options.serverLimits()
        try await ServiceHost.launch(logger: logger) {
            let server = try await BasketServer.build(configuration: configuration, logger: logger)
            try await server.run()
        }
    }
}
