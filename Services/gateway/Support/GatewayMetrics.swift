import Contracts
import RPC
import ServiceKit
import Telemetry

/// The gateway's own series beside every process's call metrics (issue 31): each upstream's
/// replicas, breaker, health and retries; calls refused by each limit; calls by the protocol
/// they came over; watches open by method. ``GatewayServer/make(configuration:upstreams:adminKey:logger:)``
/// builds it from the configuration's registry; under `--no-metrics` there is none and
/// nothing here is counted.
///
/// What the gateway keeps anyway — breakers, replica rotations, upstream health, retries,
/// watch places — is read when scraped; only refusals and calls are counted as they happen,
/// by counters handed out at start-up.
struct GatewayMetrics: Sendable {
    /// Where the series live (the one the server's call metrics use).
    let registry: MetricsRegistry

    /// The limits that refuse calls before any upstream sees them: the `limit` label of
    /// `gateway_rate_limited_total`.
    enum Limit: String, Sendable, CaseIterable {
        /// Requests a second per client (``RateLimitInterceptor``).
        case requests
        /// Invalid access tokens per address (``TokenFailureThrottle``).
        case invalidTokens = "invalid_tokens"
        /// Watches open per user and method (``WatchLimiter``).
        case watches
    }

    /// The counter of calls `limit` refuses.
    func refusals(by limit: Limit) -> Counter {
        registry.counter(
            "gateway_rate_limited_total", help: "Calls refused by one of the gateway's limits before any upstream saw them.",
            labels: ["limit": limit.rawValue])
    }

    /// The interceptor counting every call the router serves by protocol and HTTP version; it
    /// goes before every other interceptor, so refused calls count too.
    func callsByProtocol() -> CallProtocolCounter {
        CallProtocolCounter { origin in
            registry.counter(
                "gateway_calls_by_protocol_total",
                help: "Calls the gateway served, by the protocol and HTTP version they came over.",
                labels: ["protocol": origin.protocol.rawValue, "http_version": origin.httpVersion.rawValue],
                hiddenWhileZero: origin != .grpc)
        }
    }

    /// Series of `upstreams`, read when scraped: each replica's place in the rotation (an
    /// upstream at one address: whether `health` has it serving), the breaker, the health
    /// ``UpstreamHealth`` wrote to `health`, and the retries made.
    func observe(_ upstreams: [Upstream], health: HealthMonitor) {
        registry.collector(
            "gateway_upstream_replica_up", type: .gauge,
            help: "1 while a replica of an upstream takes calls (in rotation, or an upstream at one address serving), else 0."
        ) {
            upstreams.flatMap { upstream in
                Self.replicasUp(of: upstream, health: health).map { replica, up in
                    (MetricLabels([("upstream", upstream.name), ("replica", replica)]), up ? 1 : 0)
                }
            }
        }
        for upstream in upstreams {
            let labels: MetricLabels = ["upstream": upstream.name]
            registry.sampled(
                "gateway_upstream_breaker_open", type: .gauge,
                help: "1 while an upstream's circuit breaker is open or half-open (refusing calls, or letting one probe through), else 0.",
                labels: labels
            ) { upstream.breaker.isClosed ? 0 : 1 }
            registry.sampled(
                "gateway_upstream_healthy", type: .gauge,
                help: "1 while an upstream's last health check found it serving, else 0.", labels: labels
            ) { Self.isServing(upstream, health: health) ? 1 : 0 }
            registry.sampled(
                "gateway_upstream_retries_total", type: .counter,
                help: "Attempts the gateway made again after one failed to reach an upstream.", labels: labels
            ) { Double(upstream.retries.count) }
        }
    }

    /// `gateway_watches_open{method}` for each of `methods` (those `watches` caps), read when scraped.
    func observe(_ watches: WatchLimiter, methods: [MethodInfo]) {
        for method in methods {
            registry.sampled(
                "gateway_watches_open", type: .gauge, help: "Long-lived streams (watches) open through the gateway, by method.",
                labels: ["method": method.method]
            ) { [path = method.path] in Double(watches.openCount(of: path)) }
        }
    }

    /// Each replica of `upstream` by address and whether it takes calls: a balanced upstream's
    /// from its rotation, an upstream at one address's from its health check; none when the
    /// gateway knows no address (an in-process upstream).
    static func replicasUp(of upstream: Upstream, health: HealthMonitor) -> [(String, Bool)] {
        if let monitor = upstream.replicas {
            let rotation = monitor.replicas.rotation
            return rotation.addresses.enumerated().map { index, address in (address.description, index < rotation.inRotationCount) }
        }
        guard let address = upstream.address else { return [] }
        return [(address.description, isServing(upstream, health: health))]
    }

    /// Whether ``UpstreamHealth``'s last check found `upstream` serving: the status it gave the
    /// upstream's services.
    static func isServing(_ upstream: Upstream, health: HealthMonitor) -> Bool {
        upstream.services.first.map { health.status(of: $0) == .serving } ?? false
    }
}

/// The protocol a call of the router came over, the `protocol` label of
/// `gateway_calls_by_protocol_total`.
enum CallProtocol: String, Sendable, CaseIterable {
    /// gRPC over HTTP/2.
    case grpc
    /// Connect, unary (`application/json`, or GET) or streaming (`application/connect+json`).
    case connect
    /// gRPC-Web, binary framing.
    case grpcWeb = "grpc-web"
    /// gRPC-Web, base64 text framing.
    case grpcWebText = "grpc-web-text"
    /// A form of an account page (``AccountPages``) calling the router for the browser.
    case page
}

/// The HTTP version a call came over, the `http_version` label of `gateway_calls_by_protocol_total`.
enum CallHTTPVersion: String, Sendable, CaseIterable {
    /// HTTP/1.0.
    case http1_0 = "1.0"
    /// HTTP/1.1.
    case http1_1 = "1.1"
    /// HTTP/2 (gRPC always; the web edge's calls over h2c or a proxy's HTTP/2).
    case http2 = "2"

    /// The version of a ``RPC/WebRequest/version`` (`HTTP/1.0`, `HTTP/1.1`, `HTTP/2`).
    init(_ version: String) {
        switch version {
        case "HTTP/2": self = .http2
        case "HTTP/1.0": self = .http1_0
        default: self = .http1_1
        }
    }
}

/// How a call reached the router: its protocol and HTTP version. The web edge puts it in the
/// calls it makes (``CallOriginKey``); a call without one came over gRPC.
struct CallOrigin: Sendable, Hashable {
    /// The protocol.
    var `protocol`: CallProtocol
    /// The HTTP version.
    var httpVersion: CallHTTPVersion

    /// A gRPC call: always HTTP/2.
    static let grpc = CallOrigin(protocol: .grpc, httpVersion: .http2)

    /// Every origin a call can have: gRPC over HTTP/2 only, the others over any version.
    static let all: [CallOrigin] = CallProtocol.allCases.flatMap { `protocol` in
        `protocol` == .grpc ? [grpc] : CallHTTPVersion.allCases.map { CallOrigin(protocol: `protocol`, httpVersion: $0) }
    }
}

/// The ``RPC/Attributes`` key of a call's ``CallOrigin``, set by the web edge on the calls it makes.
enum CallOriginKey: AttributeKey {
    /// The stored type.
    typealias Value = CallOrigin
}

extension ServerContext {
    /// This context marked as a call that came over `protocol` in `request` (the web edge's).
    func comingOver(_ protocol: CallProtocol, in request: WebRequest) -> ServerContext {
        var context = self
        context.attributes[CallOriginKey.self] = CallOrigin(protocol: `protocol`, httpVersion: CallHTTPVersion(request.version))
        return context
    }
}

/// Counts every call of the router by its ``CallOrigin``: gRPC calls, which the transport hands
/// the router directly, and the web edge's, which it marks. Applies to every method.
struct CallProtocolCounter: ImmediateServerInterceptor {
    /// gRPC calls: nearly every call, so no look-up.
    private let grpc: Counter
    /// The web edge's calls, by origin.
    private let web: [CallOrigin: Counter]

    /// A counter whose series `counter` registers, one per origin.
    init(counter: (CallOrigin) -> Counter) {
        grpc = counter(.grpc)
        web = Dictionary(uniqueKeysWithValues: CallOrigin.all.filter { $0 != .grpc }.map { ($0, counter($0)) })
    }

    /// Every method: every call counts.
    func applies(to method: MethodInfo) -> Bool { true }

    /// Counts the call under its origin; never refuses it.
    func prepareImmediately(_ context: inout ServerContext) throws {
        guard let origin = context.attributes[CallOriginKey.self] else { return grpc.increment() }
        web[origin]?.increment()
    }
}
