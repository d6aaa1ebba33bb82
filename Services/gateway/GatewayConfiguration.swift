import Telemetry
import Foundation
import ServiceKit
import RPC

/// Everything the gateway is configured with, gathered from flags and environment by
/// `GatewayCommand` (and built directly by tests).
struct GatewayConfiguration: ServiceConfiguration {
    /// Address and port to listen on.
    var host = "127.0.0.1", port = 8080
    /// The data directory (the generated internal key lives there when not in the environment).
    var dataDirectory: String
    /// How to reach auth-svc, and the issuer and audience of its tokens.
    var auth: AuthLinkOptions
    /// The other upstreams.
    var catalogTarget = UpstreamTarget(host: "127.0.0.1", port: 7002)
    var basketTarget = UpstreamTarget(host: "127.0.0.1", port: 7003)
    var orderTarget = UpstreamTarget(host: "127.0.0.1", port: 7004)
    /// Deadlines of forwarded calls.
    var policy = ForwardingPolicy()
    /// Requests a second per client (0: no limit), and the burst allowed.
    var rateLimit = 50.0, rateBurst = 100
    /// Streams of one streaming method (a watch) one user may hold open at once.
    var maxWatchesPerUser = 10
    /// The server's deadline for calls without one and its answer-buffer bounds; the
    /// deadline is ``policy``'s default timeout whatever this says.
    var serverLimits = ServerLimits()
    var metrics: MetricsRegistry? = MetricsRegistry()
    var spans: (any SpanRecorder)?

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
    /// Where `/metrics` is served instead of the gateway's own port (`--metrics-port`), to
    /// every peer: a port the clients' route does not reach. Nil serves it on the gateway's port.
    var metricsPort: Int?
}
