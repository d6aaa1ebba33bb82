import Crypto
import Foundation
import Logging
import RPC
import RPCHTTP2
import ServiceKit
import Storage
import Telemetry

/// order-svc wired together: the store, the payment provider, clients of basket-svc and
/// catalog-svc, the handlers behind the access-token interceptor, and the loops beside the
/// server (revocation feed, recovery). Reads ``Core``'s members as its own (`server.service`).
@dynamicMemberLookup
struct OrderServer: ServiceServer {
    /// The RPC server (not yet listening), serving ``Core/router``.
    let server: HTTP2Server
    /// Everything but the socket.
    let core: Core

    /// ``core``'s member at `path`: `server.store` is `server.core.store`.
    subscript<Value>(dynamicMember path: KeyPath<Core, Value>) -> Value { core[keyPath: path] }

    /// order-svc without its socket: the complete router (interceptor, every method, health
    /// and Describe) and what it serves from. The process serves it over HTTP/2; tests can
    /// call ``router`` in-process.
    struct Core: ServiceCore {
        /// Every method order-svc serves, behind its interceptor.
        let router: Router
        /// The health of the process.
        let health: HealthMonitor
        /// The handlers (for the recovery loop), with the store and the upstream clients.
        let service: OrderService
        /// auth-svc: keys and the revocation feed.
        let auth: AuthServiceLink
        /// The logger.
        let logger: Logger
        /// What `/metrics` serves (nil under `--no-metrics`); the domain metrics are in it.
        let metrics: MetricsRegistry?
    }

    /// Builds order-svc without a socket: the data directory is created (0700), the keys
    /// resolved, the database opened and the keys a crash left claimed freed; `auth`,
    /// `catalog` and `basket` are the clients of those services, closed by ``Core/close()``.
    static func make(
        configuration: OrderConfiguration, auth authClient: RPCClient, catalog: RPCClient, basket: RPCClient,
        logger: Logger
    ) async throws -> Core {
        let directory = configuration.dataDirectory
        try ServiceMain.prepareDataDirectory(directory)
        let internalKey = try ServiceSecret.internalKey(dataDirectory: directory)
        let tokenSecret = try ServiceSecret.resolve(
            environmentName: "SHOP_ORDER_PAGE_TOKEN_KEY", path: "\(directory)/page-token-key")
        let requestSecret = try ServiceSecret.resolve(
            environmentName: "SHOP_ORDER_REQUEST_KEY", path: "\(directory)/request-hash-key")
        let store = try await OrderStore.open(location: configuration.databaseLocation, metrics: configuration.metrics)
        let freed = try await store.freeAbandonedKeys(claimedBy: store.abandonedKeyCutoff(atStartUp: true))
        if freed > 0 { logger.notice("freed idempotency keys a crash left claimed", metadata: ["keys": "\(freed)"]) }
        let auth = AuthServiceLink(
            client: authClient, issuer: configuration.auth.authIssuer, audience: configuration.auth.authAudience,
            internalKey: internalKey, logger: Logger(label: "order-svc.auth"))
        let service = OrderService(
            store: store, payments: TestPaymentProcessor(store: store), basket: basket, catalog: catalog,
            internalKey: internalKey, requestKey: SymmetricKey(data: SHA256.hash(data: Data(requestSecret.utf8))),
            pageTokens: PageTokens(secret: tokenSecret), inFlight: InFlightOrders(),
            logger: Logger(label: "order-svc.recovery"), metrics: OrderMetrics(registry: configuration.metrics))

        var router = Router()
        router.addInterceptor(auth.interceptor)
        service.register(on: &router)
        let health = HealthMonitor()
        router.addStandardServices(health: health)
        return Core(
            router: router, health: health, service: service, auth: auth, logger: logger, metrics: configuration.metrics)
    }

    /// Builds everything, the clients of auth-svc, catalog-svc and basket-svc at their
    /// configured addresses and the server included; nothing listens until
    /// ``ServiceMain/run(_:logger:)`` starts it.
    static func build(configuration: OrderConfiguration, logger: Logger) async throws -> OrderServer {
        let core = try await make(
            configuration: configuration,
            auth: try .upstream(configuration.auth.authTarget, name: "auth-svc", configuration: configuration.upstreamClients, logger: logger),
            catalog: try .upstream(configuration.catalogTarget, name: "catalog-svc", configuration: configuration.upstreamClients, logger: logger),
            basket: try .upstream(configuration.basketTarget, name: "basket-svc", configuration: configuration.upstreamClients, logger: logger), logger: logger)
        let server = try ServiceMain.makeServer(router: core.router, configuration: configuration, logger: logger)
        return OrderServer(server: server, core: core)
    }
}

extension OrderServer.Core {
    /// The revocation feed and the periodic recovery (which first recovers what a crash left).
    var companions: [@Sendable () async -> Void] { [auth.run, { [service = service] in await service.runRecovery() }] }

    /// Closes the upstream clients and the database; after the server has stopped.
    func close() async {
        await auth.client.close()
        await service.basket.close()
        await service.catalog.close()
        await service.store.database.close()
    }
}
