import ArgumentParser
import ServiceKit
import RPC

/// The `order-svc` executable: placing, reading and cancelling orders (API.md §6).
struct OrderCommand: AsyncParsableCommand {
    /// The command's name and help.
    static let configuration = CommandConfiguration(
        commandName: "order-svc",
        abstract: "Serves shop.order.v1.OrderService: orders with re-pricing, stock reservation, payment and idempotency.")

    /// `--host`, `--port`, `--data-dir`, `--log-level`, `--grace-seconds` and the server limits.
    @OptionGroup var options: ServiceOptions

    /// `--database-url`, `--database-password-file`: PostgreSQL instead of SQLite.
    @OptionGroup var database: DatabaseFlags
    /// `--auth-addr`, `--auth-issuer`, `--auth-audience`.
    @OptionGroup var auth: AuthLinkOptions

    /// `--catalog-addr`: where catalog-svc is.
    @OptionGroup var catalog: CatalogLinkOptions
    /// `--basket-addr`: where basket-svc is.
    @OptionGroup var basket: BasketLinkOptions

    /// The configuration the flags describe.
    var orderConfiguration: OrderConfiguration {
        var configuration = OrderConfiguration(
            dataDirectory: options.dataDir, auth: auth, catalogTarget: catalog.catalogTarget,
            basketTarget: basket.basketTarget)
        options.apply(to: &configuration, program: "order-svc", defaultPort: 7004)
        configuration.databaseURL = database.url
        // validate() has read the file once already; what it refused never gets here.
        configuration.databasePassword = (try? database.password()) ?? nil
        return configuration
    }

    /// Builds the server and serves until SIGTERM or SIGINT (``ServiceMain``).
    func run() async throws {
        let configuration = orderConfiguration
        try await ServiceMain.serve("order-svc", options: options) { logger in
            try await OrderServer.build(configuration: configuration, logger: logger)
        }
    }
}

/// The process entry: ``ServiceMain/main(_:)`` with ``OrderCommand``.
@main
enum OrderMain {
    /// Fills closed standard descriptors, then runs ``OrderCommand``.
    static func main() { ServiceMain.main(OrderCommand.self) }
}
