import Foundation
import Logging
import RPC
import RPCHTTP2
import ServiceKit
import Storage

/// catalog-svc wired together: the store (seeded on first start), the handlers behind the
/// API-key and access-token interceptors, the server, and the revocation feed beside it.
struct CatalogServer: Sendable {
    /// The RPC server (not yet listening).
    let server: HTTP2Server
    /// The health of the process.
    let health: HealthMonitor
    /// The database.
    let store: CatalogStore
    /// auth-svc: keys and the revocation feed.
    let auth: AuthServiceLink
    /// The logger.
    let logger: Logger

    /// What `build` needs.
    struct Configuration: Sendable {
        /// Address and port to listen on.
        var host = "127.0.0.1", port = 7002
        /// The data directory.
        var dataDirectory: String
        /// How to reach auth-svc.
        var auth: AuthLinkOptions
        /// Whether to load the seed catalog on the first start.
        var seed = true
        /// How long in-flight calls get to finish on shutdown.
        var gracePeriod: Duration = .seconds(10)
        /// The deadline of calls without one and the bounds on unread answers (``ServerLimits``).
        var serverLimits = ServerLimits()
    }

    /// Builds everything: data directory (0700), database, keys (generated into the data
    /// directory when not in the environment), seed catalog.
    static func build(configuration: Configuration, logger: Logger) async throws -> CatalogServer {
        let directory = configuration.dataDirectory
        try ServiceHost.prepareDataDirectory(directory)
        let adminKey = try ServiceSecret.resolve(environmentName: "SHOP_ADMIN_API_KEY", path: "\(directory)/admin-api-key")
        let internalKey = try ServiceSecret.resolve(
            environmentName: "SHOP_INTERNAL_API_KEY", path: "\(directory)/internal-api-key")
        let tokenSecret = try ServiceSecret.resolve(
            environmentName: "SHOP_CATALOG_PAGE_TOKEN_KEY", path: "\(directory)/page-token-key")
        let store = try await CatalogStore.open(path: "\(directory)/catalog.sqlite")
        if configuration.seed, try await store.seedIfNeeded(with: SeedCatalog.products) {
            logger.info("seed catalog loaded", metadata: ["products": "\(SeedCatalog.products.count)"])
        }
        let auth = try AuthServiceLink(
            options: configuration.auth, internalKey: internalKey, logger: Logger(label: "catalog-svc.auth"))
        let service = CatalogService(store: store, pageTokens: PageTokens(secret: tokenSecret))

        var router = Router()
        router.addInterceptor(APIKeyInterceptor(adminKey: adminKey, internalKey: internalKey))
        router.addInterceptor(auth.interceptor)
        service.register(on: &router)
        let (server, health) = try ServiceHost.makeServer(
            router: router, host: configuration.host, port: configuration.port,
            gracePeriod: configuration.gracePeriod, logger: logger, limits: configuration.serverLimits)
        return CatalogServer(server: server, health: health, store: store, auth: auth, logger: logger)
    }

    /// Serves until SIGTERM or SIGINT with the revocation feed beside the server; then drains
    /// and closes the database.
    func run() async throws {
        try await ServiceHost.run(
            server, health: health, logger: logger, companions: [auth.run],
            cleanup: {
                await auth.client.close()
                await store.database.close()
            })
    }
}
