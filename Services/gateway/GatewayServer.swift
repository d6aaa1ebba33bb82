import Contracts
import Foundation
import Logging
import RPC
import RPCHTTP2
import ServiceKit
import SystemCalls

/// The gateway wired together: one client and circuit breaker per upstream on the server's
/// own event loops, the interceptors (admin key, access tokens, rate limits), a proxy for
/// every public method, the composed StorefrontService, and the health aggregator and
/// revocation feed beside the server.
struct GatewayServer: Sendable {
    /// The RPC server (not yet listening).
    let server: HTTP2Server
    /// The gateway's health, aggregated from its upstreams.
    let health: HealthMonitor
    /// The services behind the gateway, auth-svc first.
    let upstreams: [Upstream]
    /// Polls the upstreams' health.
    let upstreamHealth: UpstreamHealth
    /// auth-svc: keys and the revocation feed, for verifying access tokens here.
    let auth: AuthServiceLink
    /// The logger.
    let logger: Logger

    /// What `build` needs.
    struct Configuration: Sendable {
        /// Address and port to listen on.
        var host = "127.0.0.1", port = 8080
        /// The data directory (the generated internal key lives there when not in the environment).
        var dataDirectory: String
        /// How to reach auth-svc, and the issuer and audience of its tokens.
        var auth: AuthLinkOptions
        /// The other upstreams.
        var catalogAddress = SocketAddressText(host: "127.0.0.1", port: 7002)
        var basketAddress = SocketAddressText(host: "127.0.0.1", port: 7003)
        var orderAddress = SocketAddressText(host: "127.0.0.1", port: 7004)
        /// Deadlines of forwarded calls.
        var policy = ForwardingPolicy()
        /// Requests a second per client (0: no limit), and the burst allowed.
        var rateLimit = 50.0, rateBurst = 100
        /// Streams of one streaming method (a watch) one user may hold open at once.
        var maxWatchesPerUser = 10
        /// The server's deadline for calls without one and its answer-buffer bounds; the
        /// deadline is ``policy``'s default timeout whatever this says.
        var serverLimits = ServerLimits()

        /// ``serverLimits`` with the policy's default timeout.
        var serverLimitsWithPolicy: ServerLimits {
            var limits = serverLimits
            limits.defaultUnaryTimeout = policy.defaultTimeout
            return limits
        }
        /// How long in-flight calls get to finish on shutdown.
        var gracePeriod: Duration = .seconds(10)
        /// Time between upstream health checks.
        var healthInterval: Duration = .seconds(1)
        /// HTTP/2 connections to each upstream; nil keeps one per event loop.
        var upstreamConnections: Int?
        /// Whether forwarding runs on the event loops (no thread hand-offs; the gateway's
        /// handlers only wait on upstreams) rather than on the cooperative pool.
        var handlersStayOnLoop = true
        /// Whether each event loop runs on a core of its own. The gateway's threads are its
        /// loops and nothing else, each woken by a socket; unpinned, the kernel tends to wake
        /// a loop on the core of the process that woke it, and two loops end up queued on one
        /// core while the other idles, and the idle CPU per forwarded call grows (seen with
        /// `Benchmarks/gateway-overhead`; Benchmarks/HISTORY.md, 2026-11-25, second session).
        var pinLoops = true
        /// The web edge: CORS origins, the storefront's files (API.md §9).
        var web = WebEdge.Configuration()
    }

    /// Builds everything; nothing listens until `run`.
    static func build(configuration: Configuration, logger: Logger) throws -> GatewayServer {
        try ServiceHost.prepareDataDirectory(configuration.dataDirectory)
        // Optional here (catalog-svc checks admin calls too), read as catalog-svc reads it.
        let adminKey = ServiceSecret.fromEnvironment("SHOP_ADMIN_API_KEY")
        let internalKey = try ServiceSecret.resolve(
            environmentName: "SHOP_INTERNAL_API_KEY", path: "\(configuration.dataDirectory)/internal-api-key")
        let group: EventLoopGroup
        do {
            group = try EventLoopGroup(count: System.coreCount, name: "gateway", pinned: configuration.pinLoops)
        } catch {
            throw StartupError("cannot start the event loops: \(error)")
        }
        var clientConfiguration = ClientConfiguration.upstream
        clientConfiguration.connectionCount = configuration.upstreamConnections
        func upstream(_ name: String, _ address: SocketAddressText, _ services: [String], required: Bool) -> Upstream {
            .connecting(
                name: name, address: address, services: services, required: required, configuration: clientConfiguration,
                group: group)
        }
        let authUpstream = upstream("auth-svc", configuration.auth.authAddress, [AuthContract.service], required: true)
        let catalog = upstream("catalog-svc", configuration.catalogAddress, [CatalogContract.service], required: true)
        let basket = upstream("basket-svc", configuration.basketAddress, [BasketContract.service], required: false)
        let order = upstream("order-svc", configuration.orderAddress, [OrderContract.service], required: false)
        let auth = AuthServiceLink(
            client: authUpstream.client, issuer: configuration.auth.authIssuer, audience: configuration.auth.authAudience,
            internalKey: internalKey, logger: Logger(label: "gateway.auth"))

        var router = Router()
        router.addInterceptor(AdminKeyInterceptor(adminKey: adminKey))
        router.addInterceptor(TokenFailureThrottle(authentication: auth.interceptor))
        router.addInterceptor(RateLimitInterceptor(perSecond: configuration.rateLimit, burst: configuration.rateBurst))
        RouteTable.register(
            on: &router,
            routes: [
                (AuthContract.all, authUpstream, configuration.policy.vouchingForClients(with: internalKey)),
                (CatalogContract.all, catalog, configuration.policy), (BasketContract.all, basket, configuration.policy),
                (OrderContract.all, order, configuration.policy),
            ], watches: WatchLimiter(perUser: configuration.maxWatchesPerUser))
        StorefrontService(catalog: catalog, basket: basket, policy: configuration.policy).register(on: &router)

        let health = HealthMonitor()
        health.setStatus(.notServing)  // until the first round of upstream checks
        let (server, _) = try ServiceHost.makeServer(
            router: router, host: configuration.host, port: configuration.port,
            gracePeriod: configuration.gracePeriod, logger: logger, health: health, group: group,
            handlersStayOnLoop: configuration.handlersStayOnLoop, limits: configuration.serverLimitsWithPolicy,
            servedHere: [StorefrontContract.service],
            web: { router in
                try WebEdge(
                    configuration: configuration.web, router: router, health: health,
                    defaultUnaryTimeout: configuration.policy.defaultTimeout, logger: logger)
            })
        let upstreams = [authUpstream, catalog, basket, order]
        let upstreamHealth = UpstreamHealth(
            upstreams: upstreams, health: health, interval: configuration.healthInterval,
            logger: Logger(label: "gateway.health"))
        return GatewayServer(
            server: server, health: health, upstreams: upstreams, upstreamHealth: upstreamHealth, auth: auth,
            logger: logger)
    }

    /// Serves until SIGTERM or SIGINT with the health aggregator and revocation feed beside
    /// the server; then drains and closes the upstream connections.
    func run() async throws {
        try await ServiceHost.run(
            server, health: health, logger: logger, companions: [upstreamHealth.run, auth.run],
            cleanup: {
                for upstream in upstreams { await upstream.close() }
            })
    }
}

extension Upstream {
    /// An upstream at `address` as the gateway reaches it: unary calls over `configuration`'s
    /// connections on `group`'s loops, streams over as many more of their own (connected when
    /// the first stream is made: an `RPCClient` connects on demand), health checks over one
    /// connection of their own. That connection waits at most half a second before
    /// reconnecting, less than the checks' interval: each check after a failure tries a new
    /// connection, so a failed check — which opens the breaker — means the upstream cannot be
    /// reached now, not that this connection is still backing off from an outage the calls'
    /// connections have already recovered from.
    static func connecting(
        name: String, address: SocketAddressText, services: [String], required: Bool,
        configuration: ClientConfiguration, group: EventLoopGroup
    ) -> Upstream {
        var healthConfiguration = configuration
        healthConfiguration.connectionCount = 1
        healthConfiguration.reconnectMaxBackoff = min(configuration.reconnectMaxBackoff, .milliseconds(500))
        // Watches may stay open for hours: when they take every stream the service allows on
        // the stream client's connections, more connections are opened rather than new watches
        // waiting for one of them to end.
        var streamConfiguration = configuration
        streamConfiguration.maxExtraConnections = Self.maxExtraStreamConnections
        return Upstream(
            name: name, services: services, required: required,
            client: RPCClient(target: address, configuration: configuration, group: group),
            streamClient: RPCClient(target: address, configuration: streamConfiguration, group: group),
            healthClient: RPCClient(target: address, configuration: healthConfiguration, group: group))
    }
}
