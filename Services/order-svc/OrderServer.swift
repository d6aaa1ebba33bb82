import Crypto
import Foundation
import Logging
import RPC
import RPCHTTP2
import ServiceKit
import Storage

/// order-svc wired together: the store, the payment provider, clients of basket-svc and
/// catalog-svc, the handlers behind the access-token interceptor, and the loops beside the
/// server (revocation feed, recovery).
struct OrderServer: Sendable {
    /// The RPC server (not yet listening).
    let server: HTTP2Server
    /// The health of the process.
    let health: HealthMonitor
    /// The handlers (for the recovery loop).
    let service: OrderService
    /// auth-svc: keys and the revocation feed.
    let auth: AuthServiceLink
    /// The logger.
    let logger: Logger

    /// What `build` needs.
    struct Configuration: Sendable {
        /// Address and port to listen on.
        var host = "127.0.0.1", port = 7004
        /// The data directory.
        var dataDirectory: String
        /// How to reach auth-svc.
        var auth: AuthLinkOptions
        /// catalog-svc and basket-svc.
        var catalogAddress: SocketAddressText, basketAddress: SocketAddressText
        /// How long in-flight calls get to finish on shutdown.
        var gracePeriod: Duration = .seconds(10)
        /// The deadline of calls without one and the bounds on unread answers (``ServerLimits``).
        var serverLimits = ServerLimits()
    }

    /// Builds everything; the data directory is created (0700) and the keys resolved.
    static func build(configuration: Configuration, logger: Logger) async throws -> OrderServer {
        let directory = configuration.dataDirectory
        try ServiceHost.prepareDataDirectory(directory)
        let internalKey = try ServiceSecret.resolve(
            environmentName: "SHOP_INTERNAL_API_KEY", path: "\(directory)/internal-api-key")
        let tokenSecret = try ServiceSecret.resolve(
            environmentName: "SHOP_ORDER_PAGE_TOKEN_KEY", path: "\(directory)/page-token-key")
        let requestSecret = try ServiceSecret.resolve(
            environmentName: "SHOP_ORDER_REQUEST_KEY", path: "\(directory)/request-hash-key")
        let store = try await OrderStore.open(path: "\(directory)/order.sqlite")
        let freed = try await store.freeAbandonedKeys()
        if freed > 0 { logger.notice("freed idempotency keys a crash left claimed", metadata: ["keys": "\(freed)"]) }
        let auth = try AuthServiceLink(
            options: configuration.auth, internalKey: internalKey, logger: Logger(label: "order-svc.auth"))
        let service = OrderService(
            store: store, payments: TestPaymentProcessor(store: store),
            basket: try RPCClient(target: configuration.basketAddress, configuration: .upstream),
            catalog: try RPCClient(target: configuration.catalogAddress, configuration: .upstream), internalKey: internalKey,
            requestKey: SymmetricKey(data: SHA256.hash(data: Data(requestSecret.utf8))),
            pageTokens: PageTokens(secret: tokenSecret), inFlight: InFlightOrders(),
            logger: Logger(label: "order-svc.recovery"))

        var router = Router()
        router.addInterceptor(auth.interceptor)
        service.register(on: &router)
        let (server, health) = try ServiceHost.makeServer(
            router: router, host: configuration.host, port: configuration.port,
            gracePeriod: configuration.gracePeriod, logger: logger, limits: configuration.serverLimits)
        return OrderServer(server: server, health: health, service: service, auth: auth, logger: logger)
    }

    /// Recovers what a crash left, then serves until SIGTERM or SIGINT with the revocation
    /// feed and the periodic recovery beside the server; then drains and closes the database.
    func run() async throws {
        try await ServiceHost.run(
            server, health: health, logger: logger, companions: [auth.run, { await service.runRecovery() }],
            cleanup: {
                await auth.client.close()
                await service.basket.close()
                await service.catalog.close()
                await service.store.database.close()
            })
    }
}
