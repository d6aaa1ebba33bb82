package import RPC
package import RPCHTTP2
package import Telemetry

/// What every service's configuration (`<Name>Configuration`) holds for its server: where it
/// listens, how long a drain may take, and its limits. ``ServiceOptions/apply(to:program:defaultPort:defaultTimeout:)``
/// sets them from the common flags; ``ServiceMain/makeServer(router:configuration:logger:)``
/// serves by them.
package protocol ServiceConfiguration: Sendable {
    /// The address to listen on.
    var host: String { get set }

    /// The port to listen on; 0 picks a free one.
    var port: Int { get set }
    /// How long in-flight calls get to finish on shutdown.
    var gracePeriod: Duration { get set }
    /// The deadline of calls without one and the bounds on unread answers (``ServerLimits``).
    var serverLimits: ServerLimits { get set }
    /// What the process counts, served at `/metrics`; nil (`--no-metrics`) counts nothing.
    /// Each configuration starts with a registry of its own, so servers built in one test
    /// process do not count into each other's.
    var metrics: MetricsRegistry? { get set }
    /// Where the spans of calls served and made go (an OTLP exporter, `--otlp-endpoint`); nil
    /// records none.
    var spans: (any SpanRecorder)? { get set }
}

extension ServiceConfiguration {
    /// The settings of this service's clients of other services (``ClientConfiguration/upstream``),
    /// counting their calls into ``metrics`` and recording their spans into ``spans``.
    package var upstreamClients: ClientConfiguration {
        ClientConfiguration.upstream.observed(metrics: metrics, spans: spans)
    }
}
