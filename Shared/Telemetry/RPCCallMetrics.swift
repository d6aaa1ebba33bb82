public import RPC

/// Which end of a call a set of ``RPCCallMetrics`` counts: the server serving it, or the
/// client making it (every upstream call). Names the series `rpc_server_…` or `rpc_client_…`.
public enum RPCSide: String, Sendable {
    case server, client
}

/// The call metrics of one side of a process, after OpenTelemetry's gRPC conventions in
/// Prometheus's spelling: calls started and finished by method and status code, durations,
/// request and response sizes.
///
/// Every method's series are made up front, for the methods given (a server's router, the
/// contract a client calls), so that a call finds its series by one lookup in a table that
/// never changes — no lock on the way. A path not in the table counts under `_OTHER`, so a
/// client sending made-up paths cannot grow the series.
public final class RPCCallMetrics: Sendable {
    /// Which side these count.
    public let side: RPCSide
    private let byPath: [String: MethodCallMetrics]
    private let other: MethodCallMetrics
    /// Client side: calls waiting for their stream to open — for their connection to be made,
    /// or for a stream slot the server's concurrency limit holds (every connection together).
    public let callsWaiting: Gauge?

    /// The series of `side` in `registry`, one set per method of `paths` (`/package.Service/Method`).
    public init(side: RPCSide, paths: [String], registry: MetricsRegistry) {
        self.side = side
        var byPath: [String: MethodCallMetrics] = [:]
        for path in paths where byPath[path] == nil {
            let (service, method) = Self.split(path)
            byPath[path] = MethodCallMetrics(side: side, service: service, method: method, registry: registry)
        }
        self.byPath = byPath
        other = MethodCallMetrics(side: side, service: "_OTHER", method: "_OTHER", registry: registry)
        callsWaiting =
            side == .client
            ? registry.gauge(
                "rpc_client_calls_waiting",
                help: "Calls waiting for their stream to open: for their connection to be made, or for a stream slot the server's concurrency limit holds.")
            : nil
    }

    /// The series of the method at `path` (`_OTHER`'s when it is not one of the table's).
    @inline(__always)
    public func method(path: String) -> MethodCallMetrics { byPath[path] ?? other }

    /// `/shop.catalog.v1.CatalogService/GetProduct` as its service and method names.
    static func split(_ path: String) -> (service: String, method: String) {
        let trimmed = path.utf8.first == UInt8(ascii: "/") ? path.dropFirst() : Substring(path)
        guard let slash = trimmed.lastIndex(of: "/") else { return (String(trimmed), "") }
        return (String(trimmed[..<slash]), String(trimmed[trimmed.index(after: slash)...]))
    }
}

/// The series of one method on one side: updated by ``start()`` and ``finish(code:duration:requestBytes:responseBytes:)``
/// with relaxed atomic adds only.
public final class MethodCallMetrics: Sendable {
    private let started: Counter
    /// Finished calls by code: index 0 is OK, then each ``RPCCode`` by its value. Counter
    /// objects the registry hands out, so that sets made twice over one registry (two clients
    /// of a process) count into the same series.
    private let finished: [Counter]
    private let duration: Histogram
    private let requestSize: Histogram
    private let responseSize: Histogram

    init(side: RPCSide, service: String, method: String, registry: MetricsRegistry) {
        let prefix = "rpc_\(side.rawValue)_"
        let labels: MetricLabels = ["service": service, "method": method]
        let started = registry.counter(prefix + "calls_started_total", help: "Calls started, by method.", labels: labels)
        self.started = started
        finished = (["OK"] + RPCCode.all.map(\.name)).map { code in
            registry.counter(
                prefix + "calls_total", help: "Calls finished, by method and gRPC status code.", labels: labels.adding("code", code),
                hiddenWhileZero: code != "OK", companion: started)
        }
        duration = registry.histogram(
            prefix + "call_duration_seconds", help: "How long calls took, from their headers to their status, in seconds.",
            buckets: .durations, labels: labels, companion: started)
        requestSize = registry.histogram(
            prefix + "request_size_bytes", help: "Bytes of request messages per call.", buckets: .messageSizes, labels: labels, companion: started)
        responseSize = registry.histogram(
            prefix + "response_size_bytes", help: "Bytes of response messages per call.", buckets: .messageSizes, labels: labels, companion: started)
    }

    /// Counts a call started.
    @inline(__always)
    public func start() { started.increment() }

    /// Counts a call finished with `code` (nil: OK), taking `duration`, having carried
    /// `requestBytes` and `responseBytes` of messages — nil when the transport does not know
    /// them (a web call answered through the router), which then leaves the sizes alone.
    @inline(__always)
    public func finish(code: RPCCode?, duration elapsed: Duration, requestBytes: Int?, responseBytes: Int?) {
        finished[code?.rawValue ?? 0].increment()
        duration.observe(elapsed)
        if let requestBytes { requestSize.observe(UInt64(max(0, requestBytes))) }
        if let responseBytes { responseSize.observe(UInt64(max(0, responseBytes))) }
    }
}
