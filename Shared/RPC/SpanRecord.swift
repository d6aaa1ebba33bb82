#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// One finished span — a call served (``Kind/server``) or made (``Kind/client``) — as a
/// span exporter receives it: its ids, method, times and status.
public struct SpanRecord: Sendable {
    /// Which end of the call the span is.
    public enum Kind: Sendable {
        case server, client
    }

    /// The method path, `/package.Service/Method` (`/_OTHER` for one no method has).
    public var path: String
    /// Served or made.
    public var kind: Kind
    /// The span's trace, id and parent.
    public var trace: TraceContext
    /// When it started, in nanoseconds since the Unix epoch.
    public var startNanoseconds: UInt64
    /// When it ended, in nanoseconds since the Unix epoch.
    public var endNanoseconds: UInt64
    /// The status it ended with; nil for OK.
    public var code: RPCCode?
    /// The other end: the client's `host:port` of a server span, the server's of a client span.
    public var peer: String

    /// A record of these fields.
    public init(
        path: String, kind: Kind, trace: TraceContext, startNanoseconds: UInt64, endNanoseconds: UInt64, code: RPCCode?, peer: String
    ) {
        self.path = path
        self.kind = kind
        self.trace = trace
        self.startNanoseconds = startNanoseconds
        self.endNanoseconds = endNanoseconds
        self.code = code
        self.peer = peer
    }

    /// A record of a span that took `duration` and ended now: the start is found by
    /// subtracting it from the wall clock (transports time calls on the monotonic clock).
    public init(path: String, kind: Kind, trace: TraceContext, duration: Duration, code: RPCCode?, peer: String) {
        let end = WallClock.nanosecondsSinceEpoch()
        let elapsed = UInt64(max(0, duration / .nanoseconds(1)))
        self.init(path: path, kind: kind, trace: trace, startNanoseconds: end &- min(elapsed, end), endNanoseconds: end, code: code, peer: peer)
    }
}

/// Takes finished spans, e.g. to export them (an OTLP exporter). Called on the transports'
/// threads as each call ends: it must return at once — queue, or drop — never block.
public protocol SpanRecorder: Sendable {
    /// Takes one finished span.
    func record(_ span: SpanRecord)

    /// Sends on what it still holds, waiting a bounded time: called once as the process
    /// stops, after its server has drained. Spans recorded afterwards may be dropped.
    func shutdown() async
}

extension SpanRecorder {
    /// Nothing to send on: a recorder that holds no spans.
    public func shutdown() async {}
}

/// The wall clock, in nanoseconds since the Unix epoch.
public enum WallClock {
    /// Now, by `CLOCK_REALTIME`.
    public static func nanosecondsSinceEpoch() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UInt64(max(0, now.tv_sec)) &* 1_000_000_000 &+ UInt64(max(0, now.tv_nsec))
    }
}
