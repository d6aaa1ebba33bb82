public import Foundation
public import RPC
internal import Synchronization

/// The HTTP/2 transport of a client of one upstream address: multiplexed HTTP/2 connections —
/// by default one per event loop, so calls made on a loop thread stay on it and the upstream
/// serves them on as many of its own loops — each replaced when lost or out of streams;
/// reconnect with jittered exponential backoff. The client API on top (typed calls, retries)
/// is RPC's ``RPCClient``.
///
/// Thread-safe; share one per upstream.
public final class HTTP2ClientTransport: ClientTransport {
    /// The upstream address.
    public let target: SocketAddressText
    private let configuration: ClientConfiguration
    private let group: EventLoopGroup
    private let ownsGroup: Bool
    /// The connection slots, in an object of their own that each connection's close callback
    /// holds strongly: a weak reference to the client would give it a side table, and then every
    /// retain and release of it — one of each per call — would take the runtime's slow path.
    private let slots: ConnectionSlots
    private let cursor = Atomic<Int>(0)
    /// `host:port` of the target, as every request's `:authority`.
    private let authority: String
    /// Looks up the target's host name for new connections, one lookup at a time.
    private let resolver: HostResolver

    struct ConnectionState {
        /// Slot `i` holds a connection on loop `i % loops.count` of the group, or nil.
        var connections: [ClientConnection?]
        var failures = 0
        var retryAt: ContinuousClock.Instant?
        var closed = false
        /// Connections taken out of their slots while usable (``RPCClient/connection()``),
        /// until they close: their calls finish on them, and ``RPCClient/close()`` and
        /// ``RPCClient/confirmConnections(within:)`` still reach them.
        var retired: [ClientConnection] = []
        /// Connections opened beside the slots' when all of those were full
        /// (``ClientConfiguration/maxExtraConnections``), until they close.
        var extra: [ClientConnection] = []

        /// Every connection that may carry calls: the slots', the retired and the extra ones.
        var all: [ClientConnection] { connections.compactMap(\.self) + retired + extra }
    }

    /// The client's connections and its reconnect backoff. Thread-safe.
    final class ConnectionSlots: Sendable {
        let state: Mutex<ConnectionState>
        private let configuration: ClientConfiguration

        init(count: Int, configuration: ClientConfiguration) {
            state = Mutex(ConnectionState(connections: Array(repeating: nil, count: count)))
            self.configuration = configuration
        }

        /// Empties the slot of a connection that closed and, when it never connected, counts a
        /// failure and sets when to reconnect.
        func connectionClosed(_ connection: ClientConnection, wasConnected: Bool) {
            state.withLock { state in
                guard let slot = state.connections.firstIndex(where: { $0 === connection }) else {
                    // Replaced already, or an extra one: how it ended says nothing of connecting
                    // now (a retired connection closing after a new round failed must not clear
                    // its backoff).
                    state.retired.removeAll { $0 === connection }
                    state.extra.removeAll { $0 === connection }
                    return
                }
                state.connections[slot] = nil
                if wasConnected {
                    state.failures = 0
                    state.retryAt = nil
                } else if state.retryAt.map({ ContinuousClock.now >= $0 }) ?? true {
                    // Slots connected together fail together: the round counts as one failure.
                    state.failures += 1
                    let delay = configuration.reconnectBackoff(afterFailures: state.failures) * Double.random(in: 0.8...1.2)
                    state.retryAt = .now + delay
                }
            }
        }
    }

    /// Creates a transport with its own event loop.
    public convenience init(target: SocketAddressText, configuration: ClientConfiguration = ClientConfiguration()) throws {
        let group = try EventLoopGroup(count: configuration.loopCount, name: "client")
        self.init(target: target, configuration: configuration, group: group, ownsGroup: true)
    }

    /// Creates a transport on existing loops (a server's, so one process runs one set of loops).
    package init(target: SocketAddressText, configuration: ClientConfiguration = ClientConfiguration(), group: EventLoopGroup, ownsGroup: Bool = false) {
        self.target = target
        self.authority = target.description
        self.resolver = HostResolver(target: target)
        self.configuration = configuration
        self.group = group
        self.ownsGroup = ownsGroup
        let count = max(1, configuration.connectionCount ?? group.loops.count)
        slots = ConnectionSlots(count: count, configuration: configuration)
    }

    /// Closes the connection and, if owned, the loops. Calls in flight fail with `UNAVAILABLE`.
    public func close() async {
        shutDownConnections(reason: "client closed", closingClient: true)
        if ownsGroup { await group.shutdown() }
    }

    /// Closes the current connections without closing the client: calls on them fail with
    /// `UNAVAILABLE`, and the next call connects afresh — for a connection suspected of being
    /// stuck (a call on it went unanswered) when the peer may well be fine.
    public func replaceConnections(reason: String) {
        shutDownConnections(reason: reason, closingClient: false)
    }

    /// Has each current connection confirm that its server still answers (a PING), and closes
    /// those that do not within `timeout`: their calls fail with `UNAVAILABLE` — for a server
    /// that may have stopped, whose calls would otherwise wait out their deadlines.
    public func confirmConnections(within timeout: Duration) {
        let connections = slots.state.withLock { $0.all }
        for connection in connections { connection.loop.execute { connection.confirmAlive(within: timeout) } }
    }

    /// Empties the connection slots (marking the client closed with `closingClient`) and shuts
    /// down the connections that were in them, each on its loop.
    private func shutDownConnections(reason: String, closingClient: Bool) {
        let connections = slots.state.withLock { state -> [ClientConnection] in
            if closingClient { state.closed = true }
            defer {
                state.connections = state.connections.map { _ in nil }
                state.retired = []
                state.extra = []
            }
            return state.all
        }
        for connection in connections { connection.loop.execute { connection.shutDown(reason: reason) } }
    }

    // MARK: Calls

    /// Whether ``close()`` has been called (a closed client makes no calls, so retries stop).
    public var isClosed: Bool { slots.state.withLock { $0.closed } }

    /// Starts a call on `path`: builds it, lets `prepare` see it, and submits it to a connection.
    public func startCall(path: String, options: CallOptions, prepare: (any ClientCall) -> Void) throws(RPCError) -> any ClientCall {
        try makeCall(path: path, options: options, prepare: prepare)
    }

    /// Starts a unary call without a task: the call holds its one request message and tells
    /// `observer` how it ended, on its connection's loop.
    public func startUnaryCall(
        path: String, request: Data, options: CallOptions, observer: any UnaryCallObserver,
        prepare: (any ClientCall) -> Void
    ) throws(RPCError) {
        _ = try makeCall(path: path, options: options) { call in
            call.prepareUnary(request, observer: observer)
            prepare(call)
        }
    }

    /// Builds a call, lets `prepare` set it up, and submits it.
    private func makeCall(path: String, options: CallOptions, prepare: (HTTP2ClientCall) -> Void) throws(RPCError) -> HTTP2ClientCall {
        // Counted from here: a call refused before it is built (its deadline gone, no
        // connection to be had during a reconnect's backoff) is a call made and failed too.
        let telemetry = CallTelemetry(path: path, peer: authority, configuration: configuration)
        let span = options.trace?.child()
        var timeLeft: Duration?
        let connection: ClientConnection
        do throws(RPCError) {
            if let deadline = options.deadline {
                let remaining = deadline - .now
                guard remaining > .zero else {
                    throw RPCError(code: .deadlineExceeded, message: "The deadline passed before the call started.")
                }
                timeLeft = remaining
            }
            // The connection first: a call that cannot have one is never built (nor prepared).
            connection = try self.connection()
        } catch {
            telemetry?.callEnded(path: path, trace: span, status: .failure(error), bytes: (0, 0))
            throw error
        }
        let head = RequestHead(
            path: path, authority: authority, timeout: timeLeft.map(GRPCTimeout.encode), metadata: options.metadata,
            requestID: options.requestID, trace: span)
        let call = HTTP2ClientCall(
            head: head, timeLeft: timeLeft, maxMessageSize: configuration.maxMessageSize, telemetry: telemetry)
        prepare(call)
        connection.submit(call)
        return call
    }

    /// The connection slot for a call made now: the calling loop's own when the caller runs on
    /// one of the group's loops (no thread hop), else the next in turn.
    private func slot(count: Int) -> Int {
        if count > 1, let index = group.indexOfCurrentLoop(), index < count { return index }
        return count == 1 ? 0 : cursor.wrappingAdd(1, ordering: .relaxed).oldValue % count
    }

    /// The connection for a call made now, connecting it if its slot has none.
    ///
    /// A slot that needs a new connection connects every other slot with it, retiring the usable
    /// connections those hold (their calls finish on them): the upstream, which hands accepted
    /// connections to its loops in turn, then receives ours one after another and puts them on
    /// different loops. Connected one by one — as calls first came to each slot, or as one
    /// connection was retired after its 2^30 streams or lost — another client's connection
    /// accepted in between could put two of ours on one upstream loop, and that loop would serve
    /// all our traffic while the upstream's other loops idled (catalog-svc behind the gateway
    /// served a fraction of its throughput; Benchmarks/HISTORY.md, 2026-11-26, 6e75bb8), for as
    /// long as the process ran.
    private func connection() throws(RPCError) -> ClientConnection {
        let result = slots.state.withLock { state -> Result<(ClientConnection, [ClientConnection], [ClientConnection]), RPCError> in
            if state.closed { return .failure(RPCError(code: .unavailable, message: "The client is closed.")) }
            let slot = slot(count: state.connections.count)
            if let connection = state.connections[slot], connection.isUsable.load(ordering: .relaxed) {
                if connection.reserveStream() { return .success((connection, [], [])) }
                return .success(roomBeside(full: connection, slot: slot, in: &state))
            }
            if let retryAt = state.retryAt, ContinuousClock.now < retryAt {
                return .failure(RPCError(
                    code: .unavailable, reason: "UPSTREAM_UNAVAILABLE",
                    message: "\(target) is unreachable; reconnecting after backoff."))
            }
            var started: [ClientConnection] = []
            var replaced: [ClientConnection] = []
            for index in state.connections.indices {
                if let current = state.connections[index] {
                    // Usable ones are retired now; the others are retiring (after their 2^30
                    // streams) or closing already. Either way they are kept track of until they close.
                    if current.isUsable.load(ordering: .relaxed) { replaced.append(current) }
                    state.retired.append(current)
                }
                let connection = newConnection(on: group.loops[index % group.loops.count])
                state.connections[index] = connection
                started.append(connection)
            }
            state.connections[slot]!.reserveStreamAnyway()  // connecting: its limit is not known yet
            return .success((state.connections[slot]!, started, replaced))
        }
        let (connection, started, replaced) = try result.get()
        for new in started { new.loop.execute { new.connect() } }
        for old in replaced { old.retireSoon() }
        return connection
    }

    /// A connection with a stream free for a call whose slot's connection, `full`, has none:
    /// another slot's, an extra one, or a new extra one (returned to be connected, on `full`'s
    /// loop) while there are fewer than ``ClientConfiguration/maxExtraConnections``; past that
    /// `full` itself, where the call waits for a stream. Under the slots' lock.
    private func roomBeside(
        full: ClientConnection, slot: Int, in state: inout ConnectionState
    ) -> (ClientConnection, [ClientConnection], [ClientConnection]) {
        for index in state.connections.indices where index != slot {
            if let other = state.connections[index], other.isUsable.load(ordering: .relaxed), other.reserveStream() {
                return (other, [], [])
            }
        }
        for extra in state.extra where extra.isUsable.load(ordering: .relaxed) && extra.reserveStream() {
            return (extra, [], [])
        }
        guard state.extra.count < configuration.maxExtraConnections else {
            full.reserveStreamAnyway()
            return (full, [], [])
        }
        let extra = newConnection(on: full.loop)
        extra.assumeStreamLimit(of: full)
        extra.reserveStreamAnyway()
        state.extra.append(extra)
        return (extra, [extra], [])
    }

    /// A connection on `loop`, not yet connecting, that empties its slot when it closes.
    private func newConnection(on loop: EventLoop) -> ClientConnection {
        // The slots hold the connection and it holds them (through this callback) until it
        // closes, which empties its slot.
        ClientConnection(target: target, loop: loop, configuration: configuration, resolver: resolver) {
            [slots] closed, connected in
            slots.connectionClosed(closed, wasConnected: connected)
        }
    }
}

extension RPCClient {
    /// A client of `target` over HTTP/2 connections on an event loop of its own.
    public convenience init(
        target: SocketAddressText, configuration: ClientConfiguration = ClientConfiguration(), retry: RetryPolicy = RetryPolicy()
    ) throws {
        self.init(transport: try HTTP2ClientTransport(target: target, configuration: configuration), retry: retry)
    }

    /// A client of `target` over HTTP/2 connections on `group`'s loops (a server's, so one
    /// process runs one set of loops).
    package convenience init(
        target: SocketAddressText, configuration: ClientConfiguration = ClientConfiguration(), retry: RetryPolicy = RetryPolicy(),
        group: EventLoopGroup
    ) {
        self.init(transport: HTTP2ClientTransport(target: target, configuration: configuration, group: group), retry: retry)
    }
}
