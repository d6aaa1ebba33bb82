import Foundation
import Logging
import RPC
import RPCHTTP2
import ServiceKit
import Storage
import Telemetry

/// catalog-svc wired together: the store (seeded on first start), the handlers behind the
/// API-key and access-token interceptors, the server, and the revocation feed beside it.
/// Reads ``Core``'s members as its own (`server.store`).
@dynamicMemberLookup
struct CatalogServer: ServiceServer {
    /// The RPC server (not yet listening), serving ``Core/router``.
    let server: HTTP2Server
    /// Everything but the socket.
    let core: Core

    /// ``core``'s member at `path`: `server.store` is `server.core.store`.
    subscript<Value>(dynamicMember path: KeyPath<Core, Value>) -> Value { core[keyPath: path] }

    /// catalog-svc without its socket: the complete router (interceptors, every method,
    /// health and Describe) and what it serves from. The process serves it over HTTP/2;
    /// tests can call ``router`` in-process.
    struct Core: ServiceCore {
        /// Every method catalog-svc serves, behind its interceptors.
        let router: Router
        /// The health of the process.
        let health: HealthMonitor
        /// The database.
        let store: CatalogStore
        /// auth-svc: keys and the revocation feed.
        let auth: AuthServiceLink
        /// The logger.
        let logger: Logger
        /// What `/metrics` serves (nil under `--no-metrics`); the domain metrics are in it.
        let metrics: MetricsRegistry?
    }

    /// Builds catalog-svc without a socket: data directory (0700), keys (generated into it when
    /// not in the environment), database, seed catalog, the router; `auth` is the client of
    /// auth-svc (keys and the revocation feed), closed by ``Core/close()``.
    ///
    /// - Throws: `StartupError` with an actionable message.
    static func make(configuration: CatalogConfiguration, auth authClient: RPCClient, logger: Logger) async throws -> Core {
        let directory = configuration.dataDirectory
        try ServiceMain.prepareDataDirectory(directory)
        let adminKey = try ServiceSecret.resolve(environmentName: "SHOP_ADMIN_API_KEY", path: "\(directory)/admin-api-key")
        let internalKey = try ServiceSecret.internalKey(dataDirectory: directory)
        let tokenSecret = try ServiceSecret.resolve(
            environmentName: "SHOP_CATALOG_PAGE_TOKEN_KEY", path: "\(directory)/page-token-key")
        let store = try await CatalogStore.open(
            location: configuration.databaseLocation, metrics: configuration.metrics, keepsAnswers: configuration.keepsAnswers)
        if try await store.searchKeepsAccents() {
            // Decided once, when the schema was created (the index's words depend on it).
            logger.warning("search keeps accents: PostgreSQL's extension unaccent could not be created with the catalog schema")
        }
        if configuration.seed, try await store.seedIfNeeded(with: SeedCatalog.products) {
            logger.info("seed catalog loaded", metadata: ["products": "\(SeedCatalog.products.count)"])
        }
        let auth = AuthServiceLink(
            client: authClient, issuer: configuration.auth.authIssuer, audience: configuration.auth.authAudience,
            internalKey: internalKey, logger: Logger(label: "catalog-svc.auth"))
        let service = CatalogService(
            store: store, pageTokens: PageTokens(secret: tokenSecret), metrics: CatalogMetrics(registry: configuration.metrics))

        var router = Router()
        router.addInterceptor(APIKeyInterceptor(adminKey: adminKey, internalKey: internalKey))
        router.addInterceptor(auth.interceptor)
        service.register(on: &router)
        let health = HealthMonitor()
        router.addStandardServices(health: health)
        return Core(router: router, health: health, store: store, auth: auth, logger: logger, metrics: configuration.metrics)
    }

    /// Builds everything, the client of auth-svc at its configured address and the server
    /// included; nothing listens until ``ServiceMain/run(_:logger:)`` starts it.
    static func build(configuration: CatalogConfiguration, logger: Logger) async throws -> CatalogServer {
        let authClient = try RPCClient.upstream(
            configuration.auth.authTarget, name: "auth-svc", configuration: configuration.upstreamClients, logger: logger)
        let core = try await make(configuration: configuration, auth: authClient, logger: logger)
        let server = try ServiceMain.makeServer(router: core.router, configuration: configuration, logger: logger)
        return CatalogServer(server: server, core: core)
    }
}

extension CatalogServer.Core {
    /// The revocation feed, beside the server.
    var companions: [@Sendable () async -> Void] { [auth.run] }

    /// Closes the client of auth-svc and the database; after the server has stopped.
    func close() async {
        await auth.client.close()
        await store.database.close()
    }
}
