public import RPC
public import Telemetry

/// How a server listens and the limits it enforces. Defaults follow API.md §1 and DESIGN.md.
public struct ServerConfiguration: Sendable {
    /// The address to bind; port 0 picks a free port (see ``HTTP2Server/port``).
    public var address: SocketAddressText
    /// The largest request message accepted (`RESOURCE_EXHAUSTED`/`MESSAGE_TOO_LARGE` above).
    public var maxMessageSize = 4 * 1024 * 1024
    /// HTTP/2 limits: concurrent streams, header list size, windows, reset and CONTINUATION limits.
    public var limits = HTTP2Limits()
    /// A connection with no calls for this long is closed, whatever else it sends (PINGs,
    /// SETTINGS, WINDOW_UPDATEs): idle means no open stream and none opened in that time.
    public var idleTimeout: Duration = .seconds(300)
    /// Bounds on the answers held for peers that do not take them (``AnswerBufferLimits``).
    public var answerBuffer = AnswerBufferLimits()
    /// A connection quiet for this long is PINGed; no answer within another interval closes it.
    public var keepaliveInterval: Duration = .seconds(60)
    /// How long a response may wait on a peer that takes none of it, as nginx's `send_timeout`:
    /// a finished answer that waits this long on a flow-control window the peer keeps shut is
    /// reset (CANCEL), and a connection whose socket takes nothing for this long is closed.
    /// Without it a client that never reads would hold every answer it asked for, and its
    /// stream slots, for as long as it keeps the connection — a call without a deadline has
    /// nothing else to end it. Calls still running (a watch) are left to their backpressure.
    /// Checked at a quarter of this interval (at least every 10 ms), so it acts within 1.25
    /// times it.
    public var sendTimeout: Duration = .seconds(60)
    /// How long in-flight calls may run after a shutdown begins before they are cancelled.
    public var gracePeriod: Duration = .seconds(10)
    /// Unary and server-streaming calls whose whole request is at most this many bytes start
    /// their handler on the event loop's thread and run there until the first suspension —
    /// no thread hand-off for handlers that finish without one. Larger requests, streaming
    /// requests, and everything after a suspension run on the cooperative pool. Handlers never
    /// block either way (blocking work goes to a `BlockingPool` or the database's threads).
    /// 0 starts every handler on the pool.
    public var inlineStartLimit = 64 * 1024
    /// Whether handlers run on their connection's event loop after a suspension too (the loop
    /// is their task executor), instead of moving to the cooperative pool: a handler that
    /// mostly waits on other calls — a proxy — then answers without any thread hand-off, and
    /// its upstream calls use the same loop's connection. Only for handlers that never block
    /// and do little CPU work per message; off by default.
    public var handlersStayOnLoop = false
    /// The deadline of a unary call that arrives without `grpc-timeout`, counted from its
    /// arrival; nil gives it none. Every call thereby ends — with its answer reset when the
    /// client never opens its window (see ``ServerConnection/deadlinePassed(_:)``) — so a
    /// client that sends no deadline cannot hold a handler or an answer for longer. The
    /// gateway sets its own, shorter default here. Streams (watches) keep only the client's.
    public var defaultUnaryTimeout: Duration? = ServerConfiguration.standardUnaryTimeout
    /// Event loops (threads); default one per core.
    public var loopCount: Int?
    /// Time limits of HTTP/1.1 connections (served only with a ``WebHandler``).
    public var http1 = HTTP1Timeouts()
    /// Where the server counts its calls, connections and held bytes (``RPCCallMetrics``,
    /// `rpc_server_…`); nil counts nothing.
    public var metrics: MetricsRegistry?

    /// The default of ``defaultUnaryTimeout``: long enough for any unary call of the shop
    /// (a PlaceOrder charging a card included), short enough that nothing is held for long.
    public static let standardUnaryTimeout: Duration = .seconds(30)

    /// A configuration listening on `host:port`.
    public init(host: String = "127.0.0.1", port: Int) {
        self.address = SocketAddressText(host: host, port: port)
    }
}

/// How long an HTTP/1.1 client may take: what a slow or idle client holds (a connection, a
/// buffer) is bounded in time as well as in bytes.
public struct HTTP1Timeouts: Sendable {
    /// A request's head must be all here this long after its first byte; else 408 and close.
    public var head: Duration = .seconds(10)
    /// A request's body must be all here this long after its first byte; else 408 and close.
    public var request: Duration = .seconds(60)
    /// A keep-alive connection with no request for this long is closed.
    public var idle: Duration = .seconds(60)

    public init() {}
}

/// Bounds on the response bytes a server holds for peers that do not take them — a client that
/// asks and keeps its flow-control window shut would otherwise make the server hold every
/// answer it asked for. What is counted: every response byte written by a handler and not yet
/// handed to the socket, plus ``streamCharge`` for each stream from its call's admission until
/// its answer has gone out, and again whenever a message waits — what such a stream costs
/// beside its bytes (its objects and nghttp2's, the answer's buffer), so that a flood of calls
/// is counted at about the memory it will take before their answers are even written. An open
/// stream with nothing waiting (a watch between changes) counts for nothing.
///
/// Past a bound, new calls are refused `RESOURCE_EXHAUSTED`/`SERVER_BUSY` (calls already
/// running go on): on a connection holding more than ``perConnection``; and, while the whole
/// server holds more than ``perProcess``, on every connection holding more than its share —
/// ``perProcess`` divided among the open connections, at most ``fairShare``, at least
/// ``minimumShare`` — so clients that read their answers keep being served while the ones
/// that do not are refused, and many connections together hold at most about twice
/// ``perProcess``. What is held drains as peers read, and ends at the latest with the
/// call's deadline or the send timeout.
public struct AnswerBufferLimits: Sendable {
    /// What one connection may hold before its new calls are refused.
    public var perConnection = 16 * 1024 * 1024
    /// What the whole server may hold before connections above ``fairShare`` are refused.
    public var perProcess = 64 * 1024 * 1024
    /// The most a connection's share of ``perProcess`` may be, with few connections open.
    public var fairShare = 256 * 1024
    /// What a connection may always hold, whatever the others do: a few calls in flight.
    public static let minimumShare = 16 * 1024
    /// What a stream with some of its answer waiting counts for, beside those bytes.
    public var streamCharge = 8 * 1024

    /// The defaults.
    public init() {}

    /// Limits with the two main bounds given (the others at their defaults).
    public init(perConnection: Int, perProcess: Int) {
        self.perConnection = perConnection
        self.perProcess = perProcess
    }
}
