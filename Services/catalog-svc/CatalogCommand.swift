import ArgumentParser
import Foundation
import Logging
import ServiceKit

/// The `catalog-svc` executable: products, search, favorites, stock (API.md §4).
@main
struct CatalogServiceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catalog-svc",
        abstract: "Serves shop.catalog.v1.CatalogService: a searchable catalog with favorites and stock.")

    @OptionGroup var options: ServiceOptions
    @OptionGroup var auth: AuthLinkOptions

    // A flag's default must be false (ArgumentParser refuses a switch that is already on), so
    // the environment is read in `run`.
    @Flag(help: "Start with an empty catalog instead of the built-in one (env SHOP_CATALOG_NO_SEED=1).")
    var noSeed = false

    func run() async throws {
        ServiceRunner.bootstrapLogging(options)
        let logger = Logger(label: "catalog-svc")
        var configuration = CatalogServer.Configuration(dataDirectory: options.dataDir, auth: auth)
        configuration.host = options.host
        configuration.port = options.resolvedPort(default: 7002)
        configuration.seed = !(noSeed || ProcessInfo.processInfo.environment["SHOP_CATALOG_NO_SEED"] == "1")
        configuration.gracePeriod = .seconds(options.graceSeconds)
        configuration.serverLimits = options.serverLimits()
        try await ServiceHost.launch(logger: logger) {
            let server = try await CatalogServer.build(configuration: configuration, logger: logger)
            try await server.run()
        }
    }
}
