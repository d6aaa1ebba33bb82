import Contracts
import Foundation
import Logging
import RPC
import RPCHTTP2
import ServiceKit
import Storage
import Telemetry

/// basket-svc wired together: the store, the watchers' hub (fed, on PostgreSQL, by the other
/// replicas' changes), the links to auth-svc and catalog-svc, the handlers behind the
/// authentication interceptor, and the server. Reads ``Core``'s members as its own
/// (`server.store`).
@dynamicMemberLookup
struct BasketServer: ServiceServer {
    /// The RPC server (not yet listening), serving ``Core/router``.
    let server: HTTP2Server
    /// Everything but the socket.
    let core: Core

    /// ``core``'s member at `path`: `server.store` is `server.core.store`.
    subscript<Value>(dynamicMember path: KeyPath<Core, Value>) -> Value { core[keyPath: path] }

    /// basket-svc without its socket: the complete router (interceptor, every method, health
    /// and Describe) and what it serves from. The process serves it over HTTP/2; tests can
    /// call ``router`` in-process.
    struct Core: ServiceCore {
        /// Every method basket-svc serves, behind its interceptor.
        let router: Router
        /// The health of the process.
        let health: HealthMonitor
        /// The database.
        let store: BasketStore
        /// The open `WatchBasket` streams.
        let hub: BasketHub
        /// On PostgreSQL, what brings the changes other replicas make to ``hub``'s watchers;
        /// nil on SQLite, whose database no other process changes.
        let changeFeed: BasketChangeFeed?
        /// Verifies access tokens and follows auth-svc's revocation feed.
        let authLink: AuthServiceLink
        /// The client of catalog-svc.
        let catalogClient: RPCClient
        /// The logger.
        let logger: Logger
        /// What `/metrics` serves (nil under `--no-metrics`); the domain metrics are in it.
        let metrics: MetricsRegistry?
    }

    /// Builds basket-svc without a socket: creates the data directory (0700), opens and
    /// migrates the database, resolves the internal key, makes the router; `auth` and `catalog`
    /// are the clients of auth-svc and catalog-svc, closed by ``Core/close()``.
    ///
    /// - Throws: `StartupError` with an actionable message.
    static func make(
        configuration: BasketConfiguration, auth authClient: RPCClient, catalog catalogClient: RPCClient, logger: Logger
    ) async throws -> Core {
        try ServiceMain.prepareDataDirectory(configuration.dataDirectory)
        let internalKey = try configuration.internalKey ?? ServiceSecret.internalKey(dataDirectory: configuration.dataDirectory)
        let store: BasketStore
        do {
            store = try await BasketStore.open(location: configuration.databaseLocation, metrics: configuration.metrics)
        } catch {
            throw StartupError("cannot open the database \(configuration.databaseLocation): \(error)")
        }

        let authLink = AuthServiceLink(
            client: authClient, issuer: configuration.authIssuer, audience: configuration.authAudience,
            internalKey: internalKey, logger: Logger(label: "basket-svc.auth"))
        let hub = BasketHub()
        BasketMetrics.register(in: configuration.metrics, hub: hub)
        let changeFeed = Self.changeFeed(location: configuration.databaseLocation, store: store, hub: hub)
        let service = BasketService(
            store: store, catalog: CatalogLink(client: catalogClient, timeoutCap: configuration.catalogTimeout), hub: hub,
            revocations: authLink.revocations)

        var router = Router()
        router.addInterceptor(authLink.interceptor)
        service.register(on: &router)
        let health = HealthMonitor()
        router.addStandardServices(health: health)
        return Core(
            router: router, health: health, store: store, hub: hub, changeFeed: changeFeed, authLink: authLink,
            catalogClient: catalogClient, logger: logger, metrics: configuration.metrics)
    }

    /// On PostgreSQL, the feed of the changes every replica commits, each basket watched here
    /// read again for `hub`'s watchers (``BasketRefresher``); nil on SQLite.
    static func changeFeed(location: DatabaseLocation, store: BasketStore, hub: BasketHub) -> BasketChangeFeed? {
        guard case .postgresql(let url, _, let password) = location else { return nil }
        let logger = Logger(label: "basket-svc.changes")
        let refresher = BasketRefresher(store: store, hub: hub, logger: logger)
        return BasketChangeFeed(
            url: url, password: password, channel: BasketStore.changeChannel, logger: logger, deliver: refresher.handle)
    }

    /// Builds everything, the clients of auth-svc and catalog-svc at their configured
    /// addresses and the server included; nothing listens until ``ServiceMain/run(_:logger:)``
    /// starts it.
    static func build(configuration: BasketConfiguration, logger: Logger) async throws -> BasketServer {
        let authClient = try RPCClient.upstream(
            configuration.authTarget, name: "auth-svc", configuration: configuration.upstreamClients, logger: logger)
        var catalogConfiguration = configuration.upstreamClients
        catalogConfiguration.connectTimeout = configuration.catalogTimeout
        let catalogClient = try RPCClient.upstream(
            configuration.catalogTarget, name: "catalog-svc", configuration: catalogConfiguration, logger: logger)
        let core = try await make(configuration: configuration, auth: authClient, catalog: catalogClient, logger: logger)
        let server = try ServiceMain.makeServer(router: core.router, configuration: configuration, logger: logger)
        return BasketServer(server: server, core: core)
    }
}

extension BasketServer.Core {
    /// The revocation feed, the end of the open watches once a shutdown starts, and on
    /// PostgreSQL the feed of other replicas' changes.
    var companions: [@Sendable () async -> Void] {
        [authLink.run, endWatchesOnShutdown] + (changeFeed.map { [$0.run] } ?? [])
    }

    /// Closes the upstream clients and the database; after the server has stopped.
    func close() async {
        await catalogClient.close()
        await authLink.client.close()
        await store.database.close()
    }

    /// Closes the hub as soon as the process stops serving (the start of a shutdown), so that
    /// open `WatchBasket` calls end at once rather than hold the drain for its grace period.
    func endWatchesOnShutdown() async {
        for await status in health.updates(for: "") where status != .serving {
            logger.info("ending open watches", metadata: ["count": "\(hub.watcherCount)"])
            hub.close()
            return
        }
    }
}
