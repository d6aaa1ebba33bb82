public import Foundation
public import RPC
internal import Synchronization

/// A client of one upstream address: multiplexed HTTP/2 connections — by default one per event
/// loop, so calls made on a loop thread stay on it and the upstream serves them on as many of
/// its own loops — each replaced when lost or out of streams; reconnect with jittered
/// exponential backoff, typed calls of all four kinds, deadlines, cancellation and gRFC A6
/// retries.
///
/// Thread-safe; share one per upstream.
public final class RPCClient: Sendable {
    /// The upstream address.
    public let target: SocketAddressText
    private let configuration: ClientConfiguration
    fileprivate let group: EventLoopGroup
    private let ownsGroup: Bool
    /// The connection slots, in an object of their own that each connection's close callback
    /// holds strongly: a weak reference to the client would give it a side table, and then every
    /// retain and release of it — one of each per call — would take the runtime's slow path.
    private let slots: ConnectionSlots
    private let cursor = Atomic<Int>(0)
    /// Calls made with ``startUnary(_:request:options:mayRetry:completion:)`` whose retry waits
    /// for its delay: ``close()`` cancels them, since the timer may never fire on stopped loops.
    fileprivate let waitingRetries = Mutex<[ObjectIdentifier: UnaryCallHandle]>([:])
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

    /// Creates a client with its own event loop.
    public convenience init(target: SocketAddressText, configuration: ClientConfiguration = ClientConfiguration()) throws {
        let group = try EventLoopGroup(count: configuration.loopCount, name: "client")
        self.init(target: target, configuration: configuration, group: group, ownsGroup: true)
    }

    /// Creates a client on existing loops (a server's, so one process runs one set of loops).
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
        let waiting = waitingRetries.withLock { waiting in
            defer { waiting.removeAll() }
            return Array(waiting.values)
        }
        for handle in waiting { handle.cancel() }
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

    // MARK: Raw calls

    /// Starts a call on `path`; the caller sends, half-closes and reads through the result.
    public func makeCall(path: String, options: CallOptions) throws -> ClientCall {
        try makeCall(path: path, options: options) { _ in }
    }

    /// Whether ``close()`` has been called (a closed client makes no calls, so retries stop).
    var isClosed: Bool { slots.state.withLock { $0.closed } }

    /// Builds a call, lets `prepare` set it up, and submits it.
    fileprivate func makeCall(path: String, options: CallOptions, prepare: (ClientCall) -> Void) throws -> ClientCall {
        var timeLeft: Duration?
        if let deadline = options.deadline {
            let remaining = deadline - .now
            guard remaining > .zero else {
                throw RPCError(code: .deadlineExceeded, message: "The deadline passed before the call started.")
            }
            timeLeft = remaining
        }
        // The connection first: a call that cannot have one is never built (nor prepared).
        let connection = try connection()
        let head = RequestHead(
            path: path, authority: authority, timeout: timeLeft.map(GRPCTimeout.encode), metadata: options.metadata,
            requestID: options.requestID)
        let call = ClientCall(head: head, timeLeft: timeLeft, maxMessageSize: configuration.maxMessageSize)
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

    // MARK: Calls without a task

    /// Makes a unary call of raw bytes without a task: `completion` is told the response
    /// message or the error, once — on the connection's loop thread; or on the calling thread
    /// (before this returns) when the call cannot start; or on the thread that cancels it. Retries as ``withRetries(_:options:mayRetry:_:)`` does:
    /// `UNAVAILABLE` before any response header, for idempotent methods (or a refused stream),
    /// after the policy's delay, while `mayRetry` (told the failed attempt) agrees.
    ///
    /// - Returns: a handle that cancels the call (and any retry still to come).
    @discardableResult
    public func startUnary(
        _ method: MethodInfo, request: Data, options: CallOptions,
        mayRetry: @escaping @Sendable (RPCError, ClientCall?) -> Bool = { _, _ in true },
        completion: @escaping @Sendable (_ result: Result<Data, RPCError>, _ lastAttempt: ClientCall?) -> Void
    ) -> UnaryCallHandle {
        let handle = UnaryCallHandle(
            client: self, method: method, request: request, options: options, mayRetry: mayRetry, completion: completion)
        handle.start(1)
        return handle
    }

    /// The delay before retrying a failed attempt, or nil when it may not be retried (the
    /// method is not idempotent, attempts are used up, the deadline would pass first).
    fileprivate func retryDelay(after attempt: Int, of method: MethodInfo, error: RPCError, options: CallOptions) -> Duration? {
        let transparent = error.reason == "REFUSED_STREAM"  // never reached the server
        guard method.idempotent || transparent, attempt < configuration.retry.maxAttempts else { return nil }
        let delay = configuration.retry.delay(beforeRetry: attempt)
        if let deadline = options.deadline, ContinuousClock.now + delay >= deadline { return nil }
        return delay
    }

    // MARK: Typed calls

    /// A unary call. Idempotent methods are retried on `UNAVAILABLE` before any response header.
    public func unary<Request, Response>(
        _ method: MethodDescriptor<Request, Response>, _ request: Request, options: CallOptions = CallOptions()
    ) async throws -> Response {
        let payload = try JSONCodec.shared.encode(request)
        return try await withRetries(method.info, options: options) { call in
            try await call.send(payload)
            call.finishSending()
            return try await Self.singleResponse(Response.self, from: call)
        }
    }

    /// A server-streaming call; `body` reads the responses while the call is open.
    public func serverStreaming<Request, Response, Result: Sendable>(
        _ method: MethodDescriptor<Request, Response>, _ request: Request, options: CallOptions = CallOptions(),
        _ body: @Sendable (ResponseMessages<Response>) async throws -> Result
    ) async throws -> Result {
        let payload = try JSONCodec.shared.encode(request)
        return try await withRetries(method.info, options: options) { call in
            try await call.send(payload)
            call.finishSending()
            if method.info.idempotent { _ = try await call.responseHeaders() }  // retry boundary
            let result = try await body(ResponseMessages(call: call))
            while try await call.nextMessage() != nil {}  // the status decides, even if body stopped early
            return result
        }
    }

    /// A client-streaming call; `requests` sends the messages, then the single response is returned.
    public func clientStreaming<Request, Response>(
        _ method: MethodDescriptor<Request, Response>, options: CallOptions = CallOptions(),
        _ requests: @Sendable (RequestSender<Request>) async throws -> Void
    ) async throws -> Response {
        try await withCall(path: method.path, options: options) { call in
            try await requests(RequestSender(call: call))
            call.finishSending()
            return try await Self.singleResponse(Response.self, from: call)
        }
    }

    /// A bidirectional call: `requests` and `responses` run concurrently.
    public func bidirectional<Request, Response, Result: Sendable>(
        _ method: MethodDescriptor<Request, Response>, options: CallOptions = CallOptions(),
        requests: @escaping @Sendable (RequestSender<Request>) async throws -> Void,
        responses: @Sendable (ResponseMessages<Response>) async throws -> Result
    ) async throws -> Result {
        try await withCall(path: method.path, options: options) { call in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    try await requests(RequestSender(call: call))
                    call.finishSending()
                }
                let result = try await responses(ResponseMessages(call: call))
                while try await call.nextMessage() != nil {}
                try await group.waitForAll()
                return result
            }
        }
    }

    /// Runs `body` on a new call, cancelling the call if the task is cancelled or `body`
    /// throws before the call finished.
    public func withCall<Result: Sendable>(
        path: String, options: CallOptions, _ body: (ClientCall) async throws -> Result
    ) async throws -> Result {
        let call = try makeCall(path: path, options: options)
        return try await withTaskCancellationHandler {
            do {
                return try await body(call)
            } catch {
                call.cancel()
                throw error
            }
        } onCancel: {
            call.cancel()
        }
    }

    /// Runs `body` on a new call for `method`, again on a new call when it fails with
    /// `UNAVAILABLE` before any response header arrived: for idempotent methods (gRFC A6:
    /// at most ``RetryPolicy/maxAttempts``, backoff within the deadline) and for streams the
    /// server refused unprocessed. `mayRetry` can veto a retry (a gateway whose circuit
    /// breaker opened).
    public func withRetries<Result: Sendable>(
        _ method: MethodInfo, options: CallOptions, mayRetry: (RPCError) -> Bool = { _ in true },
        _ body: (ClientCall) async throws -> Result
    ) async throws -> Result {
        var attempt = 1
        while true {
            var sawHeaders = false
            do {
                return try await withCall(path: method.path, options: options) { call in
                    do {
                        return try await body(call)
                    } catch {
                        sawHeaders = call.hasResponseHeaders
                        throw error
                    }
                }
            } catch let error as RPCError where error.code == .unavailable && !sawHeaders {
                guard let delay = retryDelay(after: attempt, of: method, error: error, options: options), mayRetry(error) else {
                    throw error
                }
                try await Task.sleep(for: delay)
                attempt += 1
            }
        }
    }

    static func singleResponse<Response: Decodable>(_ type: Response.Type, from call: ClientCall) async throws -> Response {
        try JSONCodec.shared.decode(type, from: try await singleRawResponse(from: call))
    }

    /// Reads the one response message of a unary-response call without decoding it (a proxy
    /// forwards the bytes); none or two are `INTERNAL`.
    public static func singleRawResponse(from call: ClientCall) async throws -> Data {
        guard let data = try await call.nextMessage() else { throw ClientCall.noResponseMessage }
        guard try await call.nextMessage() == nil else { throw ClientCall.extraResponseMessage }
        return data
    }
}

/// Sends request messages of a streaming call.
public struct RequestSender<Message: Encodable & Sendable>: Sendable {
    let call: ClientCall

    /// Encodes and sends one message, suspending while the server is slow to read.
    public func send(_ message: Message) async throws {
        try await call.send(try JSONCodec.shared.encode(message))
    }
}

/// The response messages of a streaming call; iterating ends at the status (throwing it
/// if the call failed).
public struct ResponseMessages<Message: Decodable & Sendable>: AsyncSequence, Sendable {
    public typealias Element = Message
    let call: ClientCall

    public func makeAsyncIterator() -> Iterator { Iterator(call: call) }

    /// Reads and decodes messages one at a time.
    public struct Iterator: AsyncIteratorProtocol {
        let call: ClientCall

        public mutating func next() async throws -> Message? {
            guard let data = try await call.nextMessage() else { return nil }
            return try JSONCodec.shared.decode(Message.self, from: data)
        }
    }
}

/// One call made with ``RPCClient/startUnary(_:request:options:mayRetry:completion:)``: its
/// attempts, one after another, and the handle that cancels it, whichever attempt it is on —
/// one object per call. Thread-safe.
public final class UnaryCallHandle: CallCancellable, UnaryCallObserver {
    private struct State {
        var call: ClientCall?
        var cancelled = false
        /// While a retry waits for its delay: what completes the call if it is cancelled first.
        var waitingRetry: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())
    private let client: RPCClient
    private let method: MethodInfo
    private let request: Data
    private let options: CallOptions
    private let mayRetry: @Sendable (RPCError, ClientCall?) -> Bool
    private let completion: @Sendable (Result<Data, RPCError>, ClientCall?) -> Void
    /// The attempt under way (they run one after another).
    private let attempt = Atomic<Int>(0)

    init(
        client: RPCClient, method: MethodInfo, request: Data, options: CallOptions,
        mayRetry: @escaping @Sendable (RPCError, ClientCall?) -> Bool,
        completion: @escaping @Sendable (Result<Data, RPCError>, ClientCall?) -> Void
    ) {
        self.client = client
        self.method = method
        self.request = request
        self.options = options
        self.mayRetry = mayRetry
        self.completion = completion
    }

    /// Cancels the current attempt (its completion reports `CANCELLED`) or, while a retry waits,
    /// completes the call with `CANCELLED` at once; no further attempt starts.
    public func cancel() {
        let (call, waitingRetry) = state.withLock { state in
            state.cancelled = true
            defer { state.waitingRetry = nil }
            return (state.call, state.waitingRetry)
        }
        call?.cancel()
        waitingRetry?()
    }

    // MARK: Attempts

    /// Starts attempt number `attempt`.
    func start(_ attempt: Int) {
        self.attempt.store(attempt, ordering: .releasing)
        do {
            _ = try client.makeCall(path: method.path, options: options) { call in
                call.prepareUnary(request, observer: self)
                // Tracked before it is submitted: a later attempt cannot be overtaken.
                track(call)
            }
        } catch {
            finish(attempt, .failure(error as? RPCError ?? RPCError(converting: error)), nil)
        }
    }

    func unaryCall(_ call: ClientCall, endedWith result: Result<Data, RPCError>) {
        finish(attempt.load(ordering: .acquiring), result, call)
    }

    /// Retries after the policy's delay when the attempt may be retried; completes otherwise.
    /// A handle cancelled while the retry waits completes the call at once, and the retry
    /// never starts.
    private func finish(_ attempt: Int, _ result: Result<Data, RPCError>, _ call: ClientCall?) {
        if case .failure(let error) = result, error.code == .unavailable, call?.hasResponseHeaders != true,
            !client.isClosed, let delay = client.retryDelay(after: attempt, of: method, error: error, options: options),
            mayRetry(error, call)
        {
            let cancelled = ClientCall.cancelledError
            guard awaitRetry(onCancel: { [self] in completion(.failure(cancelled), call) }) else {
                return completion(.failure(cancelled), call)
            }
            let key = ObjectIdentifier(self)
            client.waitingRetries.withLock { $0[key] = self }
            if client.isClosed { cancel() }  // closed since the check above: close() may have missed it
            let loop = call?.connection?.loop ?? client.group.loops[client.group.indexOfCurrentLoop() ?? 0]
            loop.scheduleAfter(delay) { [self] in
                client.waitingRetries.withLock { _ = $0.removeValue(forKey: key) }
                if beginRetry() { start(attempt + 1) }
            }
            return
        }
        completion(result, call)
    }

    /// Follows a new attempt; cancels it at once when the handle already was.
    private func track(_ call: ClientCall) {
        let cancelled = state.withLock { state -> Bool in
            state.call = call
            return state.cancelled
        }
        if cancelled { call.cancel() }
    }

    /// Notes that a retry waits; `onCancel` completes the call if the handle is cancelled
    /// before it starts. False when the handle is cancelled already.
    private func awaitRetry(onCancel: @escaping @Sendable () -> Void) -> Bool {
        state.withLock { state in
            guard !state.cancelled else { return false }
            state.waitingRetry = onCancel
            return true
        }
    }

    /// Whether the waiting retry may start: false when a cancellation has completed the call.
    private func beginRetry() -> Bool {
        state.withLock { state in
            guard state.waitingRetry != nil else { return false }
            state.waitingRetry = nil
            return true
        }
    }
}
