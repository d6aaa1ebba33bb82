import Contracts
import Foundation
@testable import gateway
import Logging
import RPC
import RPCHTTP2
import ServiceKit
import ServiceTestSupport
import Telemetry
import Testing

/// A gateway core built as the process builds it (``GatewayServer/make(configuration:upstreams:adminKey:logger:)``,
/// each upstream reached at one address as ``Upstream/connecting(name:target:services:required:configuration:group:logger:)``
/// reaches it), counting into a registry of its own.
struct MetricsGateway {
    let core: GatewayServer.Core
    /// Where it counts; nil under `--no-metrics`.
    let registry: MetricsRegistry?

    /// The value of the series written exactly `series` in the registry's exposition, nil when absent.
    func value(_ series: String) -> Double? { registry?.value(series) }

    /// The upstream named `name`.
    func upstream(_ name: String) -> Upstream? { core.upstreams.first { $0.name == name } }

    /// A gRPC client of the router, in-process, calling from `peer`.
    func grpcClient(peer: String = "10.9.8.7:4000") -> RPCClient {
        RPCClient(transport: InProcessTransport(router: core.router, peer: peer))
    }

    /// Runs `body` with the address of a server answering its health checks `SERVING`, and
    /// what `register` adds.
    static func withServingUpstream(
        _ register: (inout Router) -> Void = { _ in }, _ body: (SocketAddressText) async throws -> Void
    ) async throws {
        var router = Router()
        router.unary(HealthContract.check) { _, _ in HealthCheckResponse(status: .serving) }
        register(&router)
        let server = try HTTP2Server(
            configuration: ServerConfiguration(host: "127.0.0.1", port: 0), router: router, logger: ProxyFixture.logger)
        var failure: (any Error)?
        do {
            try await body(SocketAddressText(host: "127.0.0.1", port: try server.start()))
        } catch {
            failure = error
        }
        await server.shutdown()
        if let failure { throw failure }
    }

    /// Runs `body` with a gateway whose auth-svc and catalog-svc are at `auth` and `catalog` when
    /// given, every other upstream at an address nobody listens on; `configure` adjusts the
    /// configuration first.
    static func with(
        auth authAddress: SocketAddressText? = nil, catalog: SocketAddressText? = nil, _ configure: (inout GatewayConfiguration) -> Void = { _ in },
        _ body: (MetricsGateway) async throws -> Void
    ) async throws {
        let directory = try TestScratch.makeDirectory(prefix: "gateway-metrics")
        defer { try? FileManager.default.removeItem(at: directory) }
        let nobody = UpstreamTarget(host: "127.0.0.1", port: try FreePorts.take(1)[0])
        var auth = AuthLinkOptions()
        auth.authAddr = authAddress?.description ?? nobody.description
        auth.authIssuer = "gateway-metrics-tests"
        auth.authAudience = "storefront"
        var configuration = GatewayConfiguration(dataDirectory: directory.path, auth: auth)
        configuration.catalogTarget = catalog.map(UpstreamTarget.init) ?? nobody
        configuration.basketTarget = nobody
        configuration.orderTarget = nobody
        configuration.rateLimit = 0
        configure(&configuration)
        let group = try EventLoopGroup(count: 1, name: "gateway-metrics")
        let upstreams = GatewayServer.Upstreams(of: configuration) { definition in
            Upstream.connecting(
                name: definition.name, target: definition.target, services: definition.services, required: definition.required,
                configuration: .upstream, group: group, logger: ProxyFixture.logger)
        }
        let core = try GatewayServer.make(configuration: configuration, upstreams: upstreams, adminKey: nil, logger: ProxyFixture.logger)
        var failure: (any Error)?
        do {
            try await body(MetricsGateway(core: core, registry: configuration.metrics))
        } catch {
            failure = error
        }
        await core.close()
        await group.shutdown()
        if let failure { throw failure }
    }
}

@Suite("Gateway metrics", .serialized)
struct GatewayMetricsTests {
    /// Options of one call: 5 s from now (a stored value would carry one deadline for every call).
    static var options: CallOptions { CallOptions(timeout: .seconds(5)) }

    @Test("calls refused by the request rate limit count under limit=requests, and under no other limit")
    func requestRateLimit() async throws {
        try await MetricsGateway.with({ $0.rateLimit = 0.001; $0.rateBurst = 2 }) { gateway in
            let limited = #"gateway_rate_limited_total{limit="requests"}"#
            #expect(gateway.value(limited) == 0)
            let client = gateway.grpcClient()
            for _ in 0..<2 { _ = try await client.unary(HealthContract.check, HealthCheckRequest(), options: Self.options) }
            #expect(gateway.value(limited) == 0, "calls within the burst were counted")
            for refused in 1...3 {
                await ForwardUnaryLiveTests.expectError(.resourceExhausted, reason: "RATE_LIMITED") {
                    try await client.unary(HealthContract.check, HealthCheckRequest(), options: Self.options)
                }
                #expect(gateway.value(limited) == Double(refused))
            }
            #expect(gateway.value(#"gateway_rate_limited_total{limit="invalid_tokens"}"#) == 0)
            #expect(gateway.value(#"gateway_rate_limited_total{limit="watches"}"#) == 0)
        }
    }

    @Test("invalid tokens past the address's allowance count under limit=invalid_tokens")
    func invalidTokenThrottle() async throws {
        // An auth-svc publishing no keys: every token is invalid.
        try await MetricsGateway.withServingUpstream({ $0.unary(AuthContract.getJwks) { _, _ in GetJwksResponse(keys: []) } }) {
            auth in
            try await MetricsGateway.with(auth: auth) { gateway in try await Self.sendInvalidTokens(to: gateway) }
        }
    }

    /// ``invalidTokenThrottle()`` on `gateway`.
    static func sendInvalidTokens(to gateway: MetricsGateway) async throws {
        let client = gateway.grpcClient()
        let options = CallOptions(metadata: [MetadataKey.authorization: "Bearer not.a.token"], timeout: .seconds(5))
        // The throttle's allowance: 20 invalid tokens from one address are answered as such.
        for _ in 0..<20 {
            await ForwardUnaryLiveTests.expectError(.unauthenticated, reason: "INVALID_ACCESS_TOKEN") {
                try await client.unary(BasketContract.getBasket, Empty(), options: options)
            }
        }
        #expect(gateway.value(#"gateway_rate_limited_total{limit="invalid_tokens"}"#) == 0)
        await ForwardUnaryLiveTests.expectError(.resourceExhausted, reason: "RATE_LIMITED") {
            try await client.unary(BasketContract.getBasket, Empty(), options: options)
        }
        #expect(gateway.value(#"gateway_rate_limited_total{limit="invalid_tokens"}"#) == 1)
        #expect(gateway.value(#"gateway_rate_limited_total{limit="requests"}"#) == 0)
    }

    @Test("watches past the cap count under limit=watches, and watches open are a gauge by method")
    func watchCap() async throws {
        let registry = MetricsRegistry()
        let metrics = GatewayMetrics(registry: registry)
        let watches = WatchLimiter(perUser: 1, refusals: metrics.refusals(by: .watches))
        metrics.observe(watches, methods: [BasketContract.watchBasket.info, AuthContract.watchAuthState.info])
        let context = ServerContext(
            method: BasketContract.watchBasket.info, metadata: [:], deadline: nil, requestID: "watch-1", peer: "10.0.0.9:1",
            logger: ProxyFixture.logger)
        #expect(registry.value(#"gateway_watches_open{method="WatchBasket"}"#) == 0)
        try await watches.holding(for: context) {
            #expect(registry.value(#"gateway_watches_open{method="WatchBasket"}"#) == 1)
            #expect(registry.value(#"gateway_watches_open{method="WatchAuthState"}"#) == 0)
            await #expect(throws: RPCError.self) { try await watches.holding(for: context) {} }
            #expect(registry.value(#"gateway_rate_limited_total{limit="watches"}"#) == 1)
        }
        #expect(registry.value(#"gateway_watches_open{method="WatchBasket"}"#) == 0)
    }

    @Test("the gateway built as the process builds it has a watch gauge for every watch it routes")
    func watchGaugesRegistered() async throws {
        try await MetricsGateway.with { gateway in
            for method in [BasketContract.watchBasket.info, AuthContract.watchAuthState.info] {
                #expect(gateway.value("gateway_watches_open{method=\"\(method.method)\"}") == 0, "\(method.path)")
            }
        }
    }
}

/// The series of the upstreams: replicas, breakers, health, retries.
@Suite("Gateway metrics: upstreams", .serialized)
struct GatewayUpstreamMetricsTests {

    @Test("after a round of health checks: the serving upstream is up, healthy and closed; the dead ones down, unhealthy and open")
    func healthAndBreakers() async throws {
        try await MetricsGateway.withServingUpstream { catalog in try await Self.checkHealthAndBreakers(catalog: catalog) }
    }

    /// ``healthAndBreakers()`` with catalog-svc at `catalog`.
    static func checkHealthAndBreakers(catalog: SocketAddressText) async throws {
        try await MetricsGateway.with(catalog: catalog) { gateway in
            let basket = try #require(gateway.upstream("basket-svc")?.address)
            #expect(gateway.value(#"gateway_upstream_healthy{upstream="catalog-svc"}"#) == 0, "healthy before any check")
            await gateway.core.upstreamHealth.checkAll()
            // A second round: on a loaded machine a check of a dead address may time out rather
            // than be refused, and a breaker opens on the second unanswered check.
            await gateway.core.upstreamHealth.checkAll()
            #expect(gateway.value(#"gateway_upstream_healthy{upstream="catalog-svc"}"#) == 1)
            #expect(gateway.value("gateway_upstream_replica_up{upstream=\"catalog-svc\",replica=\"\(catalog)\"}") == 1)
            #expect(gateway.value(#"gateway_upstream_breaker_open{upstream="catalog-svc"}"#) == 0)
            for name in ["auth-svc", "basket-svc", "order-svc"] {
                #expect(gateway.value("gateway_upstream_healthy{upstream=\"\(name)\"}") == 0, "\(name)")
                // The checks found it unreachable (refused, or unanswered twice): its breaker opened.
                #expect(gateway.value("gateway_upstream_breaker_open{upstream=\"\(name)\"}") == 1, "\(name)")
            }
            #expect(gateway.value("gateway_upstream_replica_up{upstream=\"basket-svc\",replica=\"\(basket)\"}") == 0)
            // A breaker closes when its upstream answers again.
            gateway.upstream("basket-svc")?.breaker.recordSuccess()
            #expect(gateway.value(#"gateway_upstream_breaker_open{upstream="basket-svc"}"#) == 0)
            #expect(gateway.value(#"gateway_upstream_retries_total{upstream="catalog-svc"}"#) == 0)
        }
    }

    @Test("a breaker opened by failed calls shows 1 while open or half-open, 0 once closed")
    func breakerOpenedByCalls() async throws {
        let registry = MetricsRegistry()
        let breaker = CircuitBreaker(CircuitBreakerState(threshold: 2, initialCoolDown: .milliseconds(1)))
        let upstream = Upstream(
            name: "note-svc", services: [NoteContract.service], required: true,
            client: RPCClient(transport: InProcessTransport(router: Router())), breaker: breaker)
        GatewayMetrics(registry: registry).observe([upstream], health: HealthMonitor())
        let open = #"gateway_upstream_breaker_open{upstream="note-svc"}"#
        breaker.recordFailure()
        #expect(registry.value(open) == 0, "one failure below the threshold opened it")
        breaker.recordFailure()
        #expect(registry.value(open) == 1)
        try await Task.sleep(for: .milliseconds(5))
        #expect(breaker.admit() == .probe)
        #expect(registry.value(open) == 1, "half-open")
        breaker.recordSuccess()
        #expect(registry.value(open) == 0)
    }

    @Test("a replica of a balanced upstream that stops answering its checks shows 0, the others 1")
    func replicaDown() async throws {
        try await MetricsGateway.withServingUpstream { live in try await Self.checkReplicaDown(live: live) }
    }

    /// ``replicaDown()`` with a replica serving at `live`.
    static func checkReplicaDown(live: SocketAddressText) async throws {
        let dead = SocketAddressText(host: "127.0.0.1", port: try FreePorts.take(1)[0])
        let group = try EventLoopGroup(count: 1, name: "replica-metrics")
        let monitor = ReplicaMonitor(
            name: "catalog-svc", target: try #require(UpstreamTarget("\(live),\(dead)")), timeout: .seconds(2), lookup: nil,
            logger: ProxyFixture.logger
        ) { RPCClient(target: $0, configuration: .upstream, group: group) }
        let registry = MetricsRegistry()
        let upstream = Upstream(
            name: "catalog-svc", services: [CatalogContract.service], required: true,
            client: RPCClient(target: live, configuration: .upstream, group: group), replicas: monitor)
        GatewayMetrics(registry: registry).observe([upstream], health: HealthMonitor())
        let liveUp = "gateway_upstream_replica_up{upstream=\"catalog-svc\",replica=\"\(live)\"}"
        let deadUp = "gateway_upstream_replica_up{upstream=\"catalog-svc\",replica=\"\(dead)\"}"
        // Until checked, every replica given is in the rotation.
        #expect(registry.value(liveUp) == 1)
        #expect(registry.value(deadUp) == 1)
        await monitor.round(lookingUp: false)
        #expect(registry.value(liveUp) == 1)
        #expect(registry.value(deadUp) == 0)
        await upstream.close()
        await group.shutdown()
    }

    @Test("every retry of an unreachable upstream counts; a call not retried adds none")
    func retries() async throws {
        let slamming = try SlammingListener()
        let registry = MetricsRegistry()
        let retried = #"gateway_upstream_retries_total{upstream="note-svc"}"#
        do {
            try await ForwardUnaryLiveTests.withGateway(upstreamPort: slamming.port, upstreamConfiguration: .countingAttempts) { gateway in
                GatewayMetrics(registry: registry).observe([gateway.upstream], health: HealthMonitor())
                await ForwardUnaryLiveTests.expectError(.unavailable, reason: "UPSTREAM_UNAVAILABLE") {
                    try await gateway.client.unary(NoteContract.put, Note(text: "x"), options: ForwardUnaryLiveTests.options)
                }
                #expect(registry.value(retried) == 0, "a call that is not idempotent was retried")
                await ForwardUnaryLiveTests.expectError(.unavailable, reason: "UPSTREAM_UNAVAILABLE") {
                    try await gateway.client.unary(NoteContract.get, Note(text: "x"), options: ForwardUnaryLiveTests.options)
                }
                // Each connection the listener took was one attempt; all but the first of the get's were retries.
                let attempts = slamming.accepted
                #expect(attempts > 2)
                #expect(registry.value(retried) == Double(attempts - 2))
            }
        } catch {
            await slamming.stop()
            throw error
        }
        await slamming.stop()
    }

    @Test("retries of a forwarded server stream count as well")
    func streamRetries() async throws {
        let slamming = try SlammingListener()
        let registry = MetricsRegistry()
        do {
            try await ForwardUnaryLiveTests.withGateway(upstreamPort: slamming.port, upstreamConfiguration: .countingAttempts) { gateway in
                GatewayMetrics(registry: registry).observe([gateway.upstream], health: HealthMonitor())
                let watch = ProxyFixture.method(NoteContract.service, "Watch", kind: .serverStreaming, idempotent: true)
                await #expect(throws: RPCError.self) {
                    try await gateway.upstream.forward(watch, options: ForwardUnaryLiveTests.options) { call in
                        try await call.send(Data("{}".utf8))
                        call.finishSending()
                        _ = try await call.nextMessage()
                    }
                }
                let attempts = slamming.accepted
                #expect(attempts > 1)
                #expect(registry.value(#"gateway_upstream_retries_total{upstream="note-svc"}"#) == Double(attempts - 1))
            }
        } catch {
            await slamming.stop()
            throw error
        }
        await slamming.stop()
    }
}

/// Calls counted by the protocol and HTTP version they came over.
@Suite("Gateway metrics: calls by protocol")
struct GatewayProtocolMetricsTests {
    /// A call of Health/Check on `edge` over `protocol`'s wire format, as HTTP `version`.
    static func healthCheck(on edge: WebEdge, contentType: String, body: Data, version: String) async -> CapturedWebResponse.State {
        let response = CapturedWebResponse()
        edge.serve(
            WebRequest(
                method: "POST", path: HealthContract.check.path, query: nil, headers: WebHeaders([("content-type", contentType)]),
                body: body, peer: "10.1.2.3:5555", version: version),
            response: response)
        return await response.ended()
    }

    @Test("gRPC, Connect over HTTP/1.1 and HTTP/2, and both gRPC-Web framings are counted apart")
    func byProtocol() async throws {
        try await MetricsGateway.with { gateway in
            let edge = try WebEdge(
                configuration: WebEdge.Configuration(serveWeb: false), router: gateway.core.router, health: gateway.core.health,
                defaultUnaryTimeout: .seconds(5), metrics: gateway.registry, logger: ProxyFixture.logger)
            let series = { (protocol: String, version: String) in
                gateway.value("gateway_calls_by_protocol_total{protocol=\"\(`protocol`)\",http_version=\"\(version)\"}")
            }
            #expect(series("grpc", "2") == 0)
            let client = gateway.grpcClient()
            for _ in 0..<3 { _ = try await client.unary(HealthContract.check, HealthCheckRequest(), options: GatewayMetricsTests.options) }
            #expect(series("grpc", "2") == 3)
            #expect(series("connect", "1.1") == nil, "a series counted nothing yet is left out")

            let json = Data("{}".utf8)
            #expect(await Self.healthCheck(on: edge, contentType: "application/json", body: json, version: "HTTP/1.1").status == 200)
            #expect(await Self.healthCheck(on: edge, contentType: "application/json", body: json, version: "HTTP/1.1").status == 200)
            #expect(await Self.healthCheck(on: edge, contentType: "application/json", body: json, version: "HTTP/2").status == 200)
            let framed = ConnectEnvelope.frame(json)
            #expect(await Self.healthCheck(on: edge, contentType: "application/grpc-web+json", body: framed, version: "HTTP/2").status == 200)
            #expect(
                await Self.healthCheck(
                    on: edge, contentType: "application/grpc-web-text+json", body: GRPCWebText.encode(framed), version: "HTTP/1.1"
                ).status == 200)
            #expect(series("connect", "1.1") == 2)
            #expect(series("connect", "2") == 1)
            #expect(series("grpc-web", "2") == 1)
            #expect(series("grpc-web-text", "1.1") == 1)
            #expect(series("grpc", "2") == 3, "web calls were counted as gRPC")
        }
    }

    @Test("refused calls count too: the counter goes before the limits")
    func refusedCount() async throws {
        try await MetricsGateway.with({ $0.rateLimit = 0.001; $0.rateBurst = 1 }) { gateway in
            let client = gateway.grpcClient()
            _ = try await client.unary(HealthContract.check, HealthCheckRequest(), options: GatewayMetricsTests.options)
            await ForwardUnaryLiveTests.expectError(.resourceExhausted, reason: "RATE_LIMITED") {
                try await client.unary(HealthContract.check, HealthCheckRequest(), options: GatewayMetricsTests.options)
            }
            #expect(gateway.value(#"gateway_calls_by_protocol_total{protocol="grpc",http_version="2"}"#) == 2)
        }
    }

    @Test("under --no-metrics the router counts nothing and registers no counter")
    func noMetrics() async throws {
        try await MetricsGateway.with({ $0.metrics = nil }) { gateway in
            #expect(gateway.core.router.method(forPath: HealthContract.check.path)?.interceptors.isEmpty == true)
        }
    }
}

