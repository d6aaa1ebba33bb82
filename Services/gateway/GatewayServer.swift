import Contracts
import Foundation
import Logging
import RPC
import RPCHTTP2
import ServiceKit
import SystemCalls
import Telemetry

/// The gateway wired together: one client and circuit breaker per upstream on the server's
/// own event loops, the interceptors (admin key, access tokens, rate limits), a proxy for
/// every public method, the composed StorefrontService, the web edge, and the health
/// aggregator and revocation feed beside the server. Reads ``Core``'s members as its own
/// (`gateway.upstreams`).
@dynamicMemberLookup
struct GatewayServer: ServiceServer {
    /// The RPC server (not yet listening), serving ``Core/router`` and the web edge.
    let server: HTTP2Server
    /// Everything but the socket.
    let core: Core

    /// ``core``'s member at `path`: `server.store` is `server.core.store`.
    subscript<Value>(dynamicMember path: KeyPath<Core, Value>) -> Value { core[keyPath: path] }

    /// The services behind the gateway, each reached through an ``Upstream``.
    struct Upstreams: Sendable {
        /// auth-svc: its methods, and the keys and revocation feed that verify tokens here.
        var auth: Upstream
        /// catalog-svc.
        var catalog: Upstream
        /// basket-svc.
        var basket: Upstream
        /// order-svc.
        var order: Upstream

        /// All of them, auth-svc first.
        var all: [Upstream] { [auth, catalog, basket, order] }

        /// The four services `configuration` puts behind the gateway, each reached through
        /// the upstream `upstream` makes of its ``UpstreamDefinition``: over HTTP/2 at its address
        /// in the process (``GatewayServer/build(configuration:logger:)``), through a router in
        /// the same process in a test.
        init(of configuration: GatewayConfiguration, _ upstream: (UpstreamDefinition) throws -> Upstream) rethrows {
            auth = try upstream(UpstreamDefinition(
                name: "auth-svc", target: configuration.auth.authTarget, services: [AuthContract.service], required: true))
            catalog = try upstream(UpstreamDefinition(
                name: "catalog-svc", target: configuration.catalogTarget, services: [CatalogContract.service], required: true))
            basket = try upstream(UpstreamDefinition(
                name: "basket-svc", target: configuration.basketTarget, services: [BasketContract.service], required: false))
            order = try upstream(UpstreamDefinition(
                name: "order-svc", target: configuration.orderTarget, services: [OrderContract.service], required: false))
        }
    }

    /// What the gateway knows of one service behind it before reaching it.
    struct UpstreamDefinition: Sendable {
        /// The process name, e.g. `catalog-svc` (``Upstream/name``).
        let name: String
        /// Where the process, or its replicas, listen.
        let target: UpstreamTarget
        /// The API services it serves (``Upstream/services``).
        let services: [String]
        /// Whether the gateway is `NOT_SERVING` while it is down (``Upstream/required``).
        let required: Bool
    }

    /// The gateway without its socket: the complete router (interceptors, a proxy for every
    /// public method, StorefrontService, health and Describe) and what it forwards to. The
    /// process serves it over HTTP/2 with the web edge in front; tests can call ``router``
    /// in-process.
    struct Core: ServiceCore {
        /// Every method the gateway serves, behind its interceptors.
        let router: Router
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
        /// The listener of `--metrics-port`, serving only `/metrics`, to every peer; nil when
        /// `/metrics` is on the gateway's own port. Started and stopped beside the server.
        var metricsListener: HTTP2Server? = nil
    }

    /// Builds the gateway without a socket: the data directory (0700), the keys, the router in
    /// front of `upstreams` (closed by ``Core/close()``), checking admin calls' `x-api-key`
    /// against `adminKey` when given (else leaving that to catalog-svc). The health is not
    /// serving until the first round of upstream checks (``Core/companions``).
    ///
    /// - Throws: `StartupError` with an actionable message.
    static func make(
        configuration: GatewayConfiguration, upstreams: Upstreams, adminKey: String?, logger: Logger
    ) throws -> Core {
        try ServiceMain.prepareDataDirectory(configuration.dataDirectory)
        let internalKey = try ServiceSecret.internalKey(dataDirectory: configuration.dataDirectory)
        let auth = AuthServiceLink(
            client: upstreams.auth.client, issuer: configuration.auth.authIssuer, audience: configuration.auth.authAudience,
            internalKey: internalKey, logger: Logger(label: "gateway.auth"))

        let metrics = configuration.metrics.map(GatewayMetrics.init)
        var router = Router()
        // First: every call counts, the refused ones too.
        if let metrics { router.addInterceptor(metrics.callsByProtocol()) }
        router.addInterceptor(AdminKeyInterceptor(adminKey: adminKey))
        router.addInterceptor(
            TokenFailureThrottle(authentication: auth.interceptor, refusals: metrics?.refusals(by: .invalidTokens)))
        router.addInterceptor(
            RateLimitInterceptor(
                perSecond: configuration.rateLimit, burst: configuration.rateBurst, refusals: metrics?.refusals(by: .requests)))
        let routes: [RouteTable.Route] = [
            (AuthContract.all, upstreams.auth, configuration.policy.vouchingForClients(with: internalKey)),
            (CatalogContract.all, upstreams.catalog, configuration.policy),
            (BasketContract.all, upstreams.basket, configuration.policy),
            (OrderContract.all, upstreams.order, configuration.policy),
        ]
        let watches = WatchLimiter(perUser: configuration.maxWatchesPerUser, refusals: metrics?.refusals(by: .watches))
        RouteTable.register(on: &router, routes: routes, watches: watches)
        StorefrontService(catalog: upstreams.catalog, basket: upstreams.basket, policy: configuration.policy)
            .register(on: &router)
        let health = HealthMonitor()
        health.setStatus(.notServing)  // until the first round of upstream checks
        router.addStandardServices(health: health, servedHere: [StorefrontContract.service])
        let upstreamHealth = UpstreamHealth(
            upstreams: upstreams.all, health: health, interval: configuration.healthInterval,
            logger: Logger(label: "gateway.health"))
        metrics?.observe(upstreams.all, health: health)
        metrics?.observe(watches, methods: RouteTable.publicMethods(of: routes.flatMap(\.methods)).filter(WatchLimiter.caps))
        return Core(
            router: router, health: health, upstreams: upstreams.all, upstreamHealth: upstreamHealth, auth: auth,
            logger: logger)
    }

    /// Builds everything: the event loops, the upstreams at their configured addresses on
    /// them, the server on the same loops with the web edge; nothing listens until
    /// ``ServiceMain/run(_:logger:)`` starts it.
    static func build(configuration: GatewayConfiguration, logger: Logger) throws -> GatewayServer {
        let group: EventLoopGroup
        do {
            group = try EventLoopGroup(count: System.coreCount, name: "gateway", pinned: configuration.pinLoops)
        } catch {
            throw StartupError("cannot start the event loops: \(error)")
        }
        var clientConfiguration = configuration.upstreamClients
        clientConfiguration.connectionCount = configuration.upstreamConnections
        let upstreams = Upstreams(of: configuration) { definition in
            Upstream.connecting(
                name: definition.name, target: definition.target, services: definition.services,
                required: definition.required, configuration: clientConfiguration, group: group,
                logger: Logger(label: "gateway.replicas"))
        }
        // Optional here (catalog-svc checks admin calls too), read as catalog-svc reads it.
        let adminKey = ServiceSecret.fromEnvironment("SHOP_ADMIN_API_KEY")
        var core = try make(configuration: configuration, upstreams: upstreams, adminKey: adminKey, logger: logger)
        // With --metrics-port, /metrics is served there alone and not on the clients' port.
        if let metricsPort = configuration.metricsPort, let registry = configuration.metrics {
            core.metricsListener = try metricsListener(port: metricsPort, registry: registry, configuration: configuration, logger: logger)
        }
        let web = try WebEdge(
            configuration: configuration.web, router: core.router, health: core.health,
            defaultUnaryTimeout: configuration.policy.defaultTimeout,
            metrics: configuration.metricsPort == nil ? configuration.metrics : nil, logger: logger)
        let server = try ServiceMain.makeServer(
            router: core.router, host: configuration.host, port: configuration.port,
            gracePeriod: configuration.gracePeriod, limits: configuration.serverLimitsWithPolicy, logger: logger,
            metrics: configuration.metrics, spans: configuration.spans, group: group, handlersStayOnLoop: configuration.handlersStayOnLoop, web: web)
        return GatewayServer(server: server, core: core)
    }

    /// The `--metrics-port` listener, already bound (a port taken fails the start, as the
    /// gateway's own would): nothing but `/metrics`, on a loop of its own, so that it stops
    /// apart from the gateway's loops.
    static func metricsListener(
        port: Int, registry: MetricsRegistry, configuration: GatewayConfiguration, logger: Logger
    ) throws -> HTTP2Server {
        var listenerConfiguration = ServerConfiguration(host: configuration.host, port: port)
        listenerConfiguration.loopCount = 1
        listenerConfiguration.gracePeriod = .seconds(1)
        // Quiet below warnings: its start's "listening" line would be taken (by compose, the
        // tests) for the gateway's own, and a scrape every few seconds needs no line each.
        var quiet = logger
        quiet.logLevel = .warning
        let listener = try HTTP2Server(
            configuration: listenerConfiguration, router: Router(), logger: quiet, web: MetricsEndpoint(registry: registry))
        do {
            try listener.start()
        } catch {
            throw StartupError("cannot serve /metrics on \(configuration.host):\(port) (--metrics-port): \(error)")
        }
        logger.info("serving /metrics on its own port", metadata: ["metrics-port": "\(listener.port)"])
        return listener
    }
}

extension GatewayServer.Core {
    /// The health aggregator and the revocation feed, beside the server; the metrics listener
    /// when there is one.
    var companions: [@Sendable () async -> Void] {
        guard let metricsListener else { return [upstreamHealth.run, auth.run] }
        return [upstreamHealth.run, auth.run, { [logger] in await Self.serve(metricsListener, logger: logger) }]
    }

    /// Keeps `listener` (bound when the gateway was built) until the calling task is
    /// cancelled, after the server has drained, then stops it.
    private static func serve(_ listener: HTTP2Server, logger: Logger) async {
        while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
        await listener.shutdown()
    }

    /// Closes the upstream connections; after the server has stopped.
    func close() async {
        for upstream in upstreams { await upstream.close() }
    }
}

extension Upstream {
    /// An upstream at `target` as the gateway reaches it: unary calls over `configuration`'s
    /// connections on `group`'s loops, streams over as many more of their own (connected when
    /// the first stream is made: an `RPCClient` connects on demand), health checks over one
    /// connection of their own (``ClientConfiguration/forHealthChecks``).
    ///
    /// A target of several replicas (or a name) makes each of the three a client balanced over
    /// them (``BalancingTransport``), sharing one ``ReplicaMonitor`` that checks each replica
    /// and follows the name, and that ``close()`` stops.
    static func connecting(
        name: String, target: UpstreamTarget, services: [String], required: Bool,
        configuration: ClientConfiguration, group: EventLoopGroup, logger: Logger
    ) -> Upstream {
        // Watches may stay open for hours: when they take every stream the service allows on
        // the stream client's connections, more connections are opened rather than new watches
        // waiting for one of them to end.
        var streamConfiguration = configuration
        streamConfiguration.maxExtraConnections = Self.maxExtraStreamConnections
        let healthConfiguration = configuration.forHealthChecks
        if let address = target.singleLiteralAddress {
            return Upstream(
                name: name, services: services, required: required,
                client: RPCClient(target: address, configuration: configuration, group: group),
                streamClient: RPCClient(target: address, configuration: streamConfiguration, group: group),
                healthClient: RPCClient(target: address, configuration: healthConfiguration, group: group), address: address)
        }
        let monitor = ReplicaMonitor(name: name, target: target, lookup: ReplicaSet.systemLookup, logger: logger) { address in
            RPCClient(target: address, configuration: healthConfiguration, group: group)
        }
        func balanced(_ configuration: ClientConfiguration) -> RPCClient {
            RPCClient(transport: BalancingTransport(replicas: monitor.replicas) { address in
                HTTP2ClientTransport(target: address, configuration: configuration, group: group)
            })
        }
        monitor.start()
        return Upstream(
            name: name, services: services, required: required, client: balanced(configuration),
            streamClient: balanced(streamConfiguration), healthClient: balanced(healthConfiguration), replicas: monitor)
    }
}
