internal import RPC
internal import Telemetry

/// What a client call reports when it ends: its count, duration and sizes to the client's
/// ``RPCCallMetrics`` (started when the call is made), and its client span to the span
/// recorder. Made per call only when the client has either.
struct CallTelemetry: Sendable {
    /// The method's client series, counted as started when this was made.
    let metrics: MethodCallMetrics?
    /// Where the span goes.
    let spans: (any SpanRecorder)?
    /// When the call was made.
    let start: ContinuousClock.Instant
    /// The server's `host:port`.
    let peer: String

    /// The telemetry of a call on `path` made now, when `configuration` asks for any.
    init?(path: String, peer: String, configuration: ClientConfiguration) {
        guard configuration.metrics != nil || configuration.spans != nil else { return nil }
        metrics = configuration.metrics?.method(path: path)
        spans = configuration.spans
        start = .now
        self.peer = peer
        metrics?.start()
    }

    /// Counts the call's end and records its span (when it has one).
    func callEnded(path: String, trace: TraceContext?, status: Result<Void, RPCError>, bytes: (sent: Int, received: Int)) {
        let elapsed = ContinuousClock.now - start
        let code: RPCCode? = if case .failure(let error) = status { error.code } else { nil }
        metrics?.finish(code: code, duration: elapsed, requestBytes: bytes.sent, responseBytes: bytes.received)
        if let spans, let trace {
            spans.record(SpanRecord(path: path, kind: .client, trace: trace, duration: elapsed, code: code, peer: peer))
        }
    }
}
