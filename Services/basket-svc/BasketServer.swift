import Contracts
import Foundation
import Logging
import RPC
import RPCHTTP2
import ServiceKit
import Storage

/// basket-svc wired together: the store, the watchers' hub, the links to auth-svc and
/// catalog-svc, the handlers behind the authentication interceptor, and the server.
struct BasketServer: Sendable {
    /// The RPC server (not yet listening).
    let server: HTTP2Server
    /// The health of the process.
    let health: HealthMonitor
    /// The database.
    let store: BasketStore
    /// The open `WatchBasket` streams.
    let hub: BasketHub
    /// Verifies access tokens and follows auth-svc's revocation feed.
    let authLink: AuthServiceLink
    /// The client of catalog-svc.
    let catalogClient: RPCClient
    /// The logger.
    let logger: Logger

    /// Builds everything `configuration` describes: creates the data directory (0700), opens
    /// and migrates the database, resolves the internal key, makes the upstream clients.
    ///
    /// - Throws: `StartupError` with an actionable message.
    static func build(configuration: BasketConfiguration, logger: Logger) async throws -> BasketServer {
        try ServiceHost.prepareDataDirectory(configuration.dataDirectory)
        let internalKey: String
        do {
            internalKey = try configuration.internalKey
                ?? ServiceSecret.resolve(environmentName: "SHOP_INTERNAL_API_KEY", path: configuration.internalKeyPath)
        } catch {
            throw StartupError("\(error)")
        }
        let store: BasketStore
        do {
            store = try await BasketStore.open(path: configuration.databasePath)
        } catch {
            throw StartupError("cannot open the database \(configuration.databasePath): \(error)")
        }

        let authLink = AuthServiceLink(
            client: try RPCClient(target: configuration.authAddress, configuration: .upstream), issuer: configuration.authIssuer,
            audience: configuration.authAudience, internalKey: internalKey, logger: Logger(label: "basket-svc.auth"))
        var catalogConfiguration = ClientConfiguration.upstream
        catalogConfiguration.connectTimeout = configuration.catalogTimeout
        let catalogClient = try RPCClient(target: configuration.catalogAddress, configuration: catalogConfiguration)
        let hub = BasketHub()
        let service = BasketService(
            store: store, catalog: CatalogLink(client: catalogClient, timeoutCap: configuration.catalogTimeout), hub: hub,
            revocations: authLink.revocations)

        var router = Router()
        router.addInterceptor(authLink.interceptor)
        service.register(on: &router)
        let (server, health) = try ServiceHost.makeServer(
            router: router, host: configuration.host, port: configuration.port,
            gracePeriod: configuration.gracePeriod, logger: logger, limits: configuration.serverLimits)
        return BasketServer(
            server: server, health: health, store: store, hub: hub, authLink: authLink, catalogClient: catalogClient,
            logger: logger)
    }

    /// Serves until SIGTERM or SIGINT, following the revocation feed beside the server; then
    /// ends the open watches, drains, closes the upstream clients and the database.
    func run() async throws {
        try await ServiceHost.run(
            server, health: health, logger: logger, companions: [authLink.run, endWatchesOnShutdown],
            cleanup: {
                await catalogClient.close()
                await authLink.client.close()
                await store.database.close()
            })
    }

    /// Closes the hub as soon as the process stops serving (the start of a shutdown), so that
    /// open `WatchBasket` calls end at once rather than hold the drain for its grace period.
    private func endWatchesOnShutdown() async {
        for await status in health.updates(for: "") where status != .serving {
            logger.info("ending open watches", metadata: ["count": "\(hub.watcherCount)"])
            hub.close()
            return
        }
    }
}
