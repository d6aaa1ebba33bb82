public import RPC
public import Telemetry

/// How a client connects and retries. Defaults follow DESIGN.md ("The client").
public struct ClientConfiguration: Sendable {
    /// The largest response message accepted.
    public var maxMessageSize = 4 * 1024 * 1024
    /// HTTP/2 limits advertised to the server.
    public var limits = HTTP2Limits()
    /// How long establishing a connection may take.
    public var connectTimeout: Duration = .seconds(5)
    /// Reconnect backoff after a failed connection: initial delay…
    public var reconnectInitialBackoff: Duration = .milliseconds(100)
    /// …growth factor…
    public var reconnectMultiplier = 1.6
    /// …and cap (jittered by ±20 %).
    public var reconnectMaxBackoff: Duration = .seconds(5)
    /// Event loops when the client owns its own (default 1).
    public var loopCount = 1
    /// HTTP/2 connections kept to the upstream; nil (the default) keeps one per event loop, so
    /// a call made on a loop thread uses that loop's connection and the upstream spreads the
    /// connections over its own loops.
    public var connectionCount: Int?
    /// Calls one connection carries before it is retired: it takes no new calls, and closes
    /// once those on it have finished, while a new connection takes over. The default is what
    /// HTTP/2 allows — 2^30 client stream ids — less a margin for calls already on their way to
    /// it: a busy connection never reaches the end of its ids with calls still coming.
    public var maxStreamsPerConnection = (1 << 30) - 1024
    /// Connections opened beside the slots' when every one of those has as many calls open as
    /// the server allows (its SETTINGS_MAX_CONCURRENT_STREAMS): long-lived streams — watches —
    /// would otherwise fill them, and further calls would wait in the connection's queue until
    /// one ended, which a watch may never do. Past this many, calls wait in that queue again.
    /// 0 (the default) opens none and counts no streams: unary calls end soon enough to wait
    /// for a stream, and keep to one connection per loop (see ``connectionCount``).
    public var maxExtraConnections = 0
    /// Keepalive: while calls are open and nothing has arrived for this long, send a PING; nil
    /// (the default, as in other gRPC clients, since servers such as grpc-go's refuse pings
    /// more often than every 5 minutes) sends none. Our own servers accept them, so Storefront's
    /// service-to-service clients turn it on to notice a half-dead upstream while a call waits.
    public var keepaliveInterval: Duration?
    /// How long a keepalive PING may go unanswered before the connection is given up and its
    /// calls fail with `UNAVAILABLE`.
    public var keepaliveTimeout: Duration = .seconds(20)
    /// Where calls made are counted (`rpc_client_…`, by method and code); nil counts nothing.
    public var metrics: RPCCallMetrics?
    /// Where each call's client span goes when it ends (an OTLP exporter); nil records none.
    public var spans: (any SpanRecorder)?

    /// The defaults.
    public init() {}
}

extension ClientConfiguration {
    /// The reconnect delay after `failures` connection attempts in a row have failed (before
    /// jitter): the initial backoff grown by the multiplier per further failure, at most the cap.
    /// Any count is safe, however long the upstream stays down.
    package func reconnectBackoff(afterFailures failures: Int) -> Duration {
        Duration.exponentialBackoff(
            initial: reconnectInitialBackoff, multiplier: reconnectMultiplier, step: failures, cap: reconnectMaxBackoff)
    }
}
