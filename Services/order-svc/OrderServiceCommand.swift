import ArgumentParser
import Foundation
import Logging
import RPCHTTP2
import ServiceKit

/// The `order-svc` executable: placing, reading and cancelling orders (API.md §6).
@main
struct OrderServiceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "order-svc",
        abstract: "Serves shop.order.v1.OrderService: orders with re-pricing, stock reservation, payment and idempotency.")

    private static let environment = ProcessInfo.processInfo.environment

    @OptionGroup var options: ServiceOptions
    @OptionGroup var auth: AuthLinkOptions

    @Option(help: "catalog-svc address host:port (env SHOP_CATALOG_ADDR).")
    var catalogAddr = environment["SHOP_CATALOG_ADDR"] ?? "127.0.0.1:7002"

    @Option(help: "basket-svc address host:port (env SHOP_BASKET_ADDR).")
    var basketAddr = environment["SHOP_BASKET_ADDR"] ?? "127.0.0.1:7003"

    func validate() throws {
        guard SocketAddressText(catalogAddr) != nil else { throw ValidationError("--catalog-addr must be host:port.") }
        guard SocketAddressText(basketAddr) != nil else { throw ValidationError("--basket-addr must be host:port.") }
    }

    func run() async throws {
        ServiceRunner.bootstrapLogging(level: options.level)
        let logger = Logger(label: "order-svc")
        guard let catalog = SocketAddressText(catalogAddr), let basket = SocketAddressText(basketAddr) else {
            throw ValidationError("--catalog-addr and --basket-addr must be host:port.")
        }
        var configuration = OrderServer.Configuration(
            dataDirectory: options.dataDir, auth: auth, catalogAddress: catalog, basketAddress: basket)
        configuration.host = options.host
        configuration.port = options.resolvedPort(default: 7004)
        configuration.gracePeriod = .seconds(options.graceSeconds)
        try await ServiceHost.launch(logger: logger) {
            let server = try await OrderServer.build(configuration: configuration, logger: logger)
            try await server.run()
        }
    }
}
