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

    @OptionGroup var options: ServiceOptions
    @OptionGroup var auth: AuthLinkOptions

    @OptionGroup var catalog: CatalogLinkOptions
    @OptionGroup var basket: BasketLinkOptions

    func run() async throws {
        ServiceRunner.bootstrapLogging(options)
        let logger = Logger(label: "order-svc")
        var configuration = OrderServer.Configuration(
            dataDirectory: options.dataDir, auth: auth, catalogAddress: catalog.catalogAddress,
            basketAddress: basket.basketAddress)
        configuration.host = options.host
        configuration.port = options.resolvedPort(default: 7004)
        configuration.gracePeriod = .seconds(options.graceSeconds)
        configuration.serverLimits = options.serverLimits()
        try await ServiceHost.launch(logger: logger) {
            let server = try await OrderServer.build(configuration: configuration, logger: logger)
            try await server.run()
        }
    }
}
