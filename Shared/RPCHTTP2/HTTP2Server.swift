#if canImport(Glibc)
internal import Glibc
#endif
public import Logging
public import RPC
package import Telemetry
internal import Synchronization
internal import SystemCalls

/// A gRPC server over h2c: accepts connections, spreads them over event loops, routes calls
/// to a ``Router`` and shuts down gracefully.
///
/// All operations are thread-safe.
public final class HTTP2Server: Sendable {
    private let core: HTTP2ServerCore
    private let group: EventLoopGroup
    private let ownsGroup: Bool
    private let state = Mutex<(listener: Listener?, port: Int, stopped: Bool)>((nil, 0, false))

    /// Creates a server; nothing listens until ``start()``.
    /// `web` serves what is not gRPC — HTTP/1.1 connections, and HTTP/2 requests of another
    /// content type; without it those get 415 (HTTP/2) or are closed (HTTP/1.1).
    public convenience init(configuration: ServerConfiguration, router: Router, logger: Logger, web: (any WebHandler)? = nil) throws {
        let group = try EventLoopGroup(count: configuration.loopCount ?? System.coreCount, name: "server")
        self.init(configuration: configuration, router: router, logger: logger, group: group, ownsGroup: true, web: web)
    }

    /// Creates a server on existing loops (shared with clients, as in tests).
    package init(
        configuration: ServerConfiguration, router: Router, logger: Logger, group: EventLoopGroup, ownsGroup: Bool = false,
        web: (any WebHandler)? = nil
    ) {
        self.core = HTTP2ServerCore(configuration: configuration, router: router, logger: logger, web: web)
        self.group = group
        self.ownsGroup = ownsGroup
    }

    /// The bound port (useful when configured with port 0); 0 before ``start()``.
    public var port: Int { state.withLock { $0.port } }

    /// Where the server counts (``ServerConfiguration/metrics``).
    package var metrics: MetricsRegistry? { core.configuration.metrics }

    /// Where the spans of its calls go (``ServerConfiguration/spans``).
    package var spans: (any SpanRecorder)? { core.configuration.spans }

    /// Connections open now.
    package var openConnectionCount: Int { core.openConnectionCount.load(ordering: .relaxed) }

    /// What the server holds for its peers now: unsent answer bytes and the charge of streams
    /// whose answers are not all out (``AnswerBufferLimits``).
    package var heldAnswerBytes: Int { core.heldAnswerBytes.load(ordering: .relaxed) }

    /// The name of each open connection's loop: how the connections are spread.
    package var loopsOfOpenConnections: [String] { core.openConnections.map(\.loop.name) }

    /// The name of the loop of the open connection from `peer` (`host:port`), if there is one.
    package func loopOfConnection(from peer: String) -> String? {
        core.openConnections.first { $0.peer == peer }?.loop.name
    }

    /// Binds and starts accepting connections. Returns the bound port.
    @discardableResult
    public func start() throws -> Int {
        let (fd, port) = try Socket.listen(on: core.configuration.address)
        let loop = group.loops[0]
        let listener = Listener(fd: fd, loop: loop, group: group, core: core)
        state.withLock {
            $0.listener = listener
            $0.port = port
        }
        loop.execute { listener.start() }
        core.logger.info("listening", metadata: ["address": "\(core.configuration.address.host):\(port)"])
        return port
    }

    /// Starts if needed, serves until the calling task is cancelled, then shuts down gracefully.
    public func run() async throws {
        if port == 0 { try start() }
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        await withTaskCancellationHandler {
            for await _ in stream {}
        } onCancel: {
            continuation.finish()
        }
        await shutdown()
    }

    /// Graceful shutdown: stop accepting, GOAWAY notice then final GOAWAY on every connection,
    /// let in-flight calls finish within the grace period, then cancel what is left and close.
    public func shutdown() async {
        let listener = state.withLock { state -> Listener? in
            defer { state.listener = nil; state.stopped = true }
            return state.stopped ? nil : state.listener
        }
        guard let listener else { return }
        listener.loop.execute { listener.close() }
        core.logger.info("shutting down", metadata: ["in-flight": "\(core.inFlight)"])
        for connection in core.openConnections { connection.loop.execute { connection.beginDrain() } }
        let drained = await core.waitForCalls(upTo: core.configuration.gracePeriod)
        if !drained {
            core.logger.warning("grace period over; cancelling \(core.inFlight) calls")
        }
        // Give the final frames a moment to leave, then close whatever is still open.
        _ = await core.waitForConnections(upTo: .milliseconds(drained ? 500 : 50))
        for connection in core.openConnections { connection.loop.execute { connection.close(reason: "shutdown") } }
        _ = await core.waitForConnections(upTo: .seconds(1))
        if ownsGroup { await group.shutdown() }
    }
}

/// Accepts connections on a listening socket (on one loop) and hands each to a loop.
final class Listener: EventHandler, @unchecked Sendable {
    // Invariant for @unchecked Sendable: after init, touched only on `loop`.
    private let fd: Int32
    let loop: EventLoop
    private let group: EventLoopGroup
    private let core: HTTP2ServerCore
    private var closed = false
    /// Whether accepting is paused after the process ran out of descriptors or memory.
    private var paused = false
    /// Accept failures not logged yet (one line per ``acceptPause`` at most) and when the last
    /// line was written.
    private var unloggedFailures = 0
    private var lastFailureLog: ContinuousClock.Instant?
    /// How long accepting pauses when the process is out of descriptors or memory: the listener
    /// stays readable while connections wait, so retrying at once would spin the loop.
    static let acceptPause: Duration = .milliseconds(100)

    init(fd: Int32, loop: EventLoop, group: EventLoopGroup, core: HTTP2ServerCore) {
        self.fd = fd
        self.loop = loop
        self.group = group
        self.core = core
    }

    func start() {
        do {
            try loop.register(fd, readable: true, writable: false, handler: self)
        } catch {
            core.logger.error("cannot watch the listening socket: \(error)")
        }
    }

    func handleEvent(readable: Bool, writable: Bool, hangup: Bool) {
        while !closed && !paused {
            let accepted: (fd: Int32, peer: String)?
            do {
                accepted = try Socket.accept(fd)
            } catch {
                acceptFailed(error)
                continue  // paused, or past one connection that failed
            }
            guard let accepted else { return }
            let target = group.next()
            let core = self.core
            target.execute {
                // With a web handler the first bytes tell HTTP/2 from HTTP/1.1 (ProtocolSniffer).
                let connection: any ServedConnection =
                    if let web = core.web {
                        ProtocolSniffer(fd: accepted.fd, peer: accepted.peer, loop: target, server: core, web: web)
                    } else {
                        ServerConnection(fd: accepted.fd, peer: accepted.peer, loop: target, server: core)
                    }
                core.connectionOpened(connection)
                connection.start()
            }
        }
    }

    /// Errors of `accept` that concern one connection (accept(2): the client gave up while in
    /// the backlog, or a network error Linux passes on): that connection is skipped.
    private static let connectionErrors: Set<Int32> = [
        ECONNABORTED, EPROTO, EPERM, ENETDOWN, ENOPROTOOPT, EHOSTDOWN, ENONET, EHOSTUNREACH, EOPNOTSUPP, ENETUNREACH,
    ]

    /// Logs at most one line per ``acceptPause``. An error of one connection skips it; any
    /// other — out of descriptors or memory (EMFILE, ENFILE, ENOBUFS, ENOMEM) — stops watching
    /// the listener for ``acceptPause``, the waiting connections staying in the backlog.
    private func acceptFailed(_ error: SystemError) {
        unloggedFailures += 1
        let now = ContinuousClock.now
        if lastFailureLog.map({ now - $0 >= Self.acceptPause }) ?? true {
            let count = unloggedFailures
            core.logger.warning("accept failed: \(error)\(count > 1 ? " (\(count) failures since the last report)" : "")")
            unloggedFailures = 0
            lastFailureLog = now
        }
        // After accept itself succeeded (setting the descriptor's flags), only that one failed.
        if error.function != "accept" || Self.connectionErrors.contains(error.errno) { return }
        paused = true
        loop.modify(fd, readable: false, writable: false)
        loop.scheduleTimer(after: Self.acceptPause) { [self] in
            paused = false
            guard !closed else { return }
            loop.modify(fd, readable: true, writable: false)
        }
    }

    func close() {
        guard !closed else { return }
        closed = true
        loop.deregister(fd)
        System.close(fd)
    }
}

/// What every connection of a server shares: configuration, router, logger and the counts
/// that graceful shutdown waits on. Thread-safe.
final class HTTP2ServerCore: Sendable {
    let configuration: ServerConfiguration
    let router: Router
    let logger: Logger
    /// What serves requests that are not gRPC (``WebHandler``), if anything does.
    let web: (any WebHandler)?
    /// The logger's level, read once: asking the handler costs a dynamic call on every call,
    /// and the level is set when the process starts.
    private let logLevel: Logger.Level
    /// The logger's handler when it writes call lines itself (found once, not cast per call).
    private let callLines: (any CallLineLogging)?
    private let calls = Atomic<Int>(0)
    /// What every connection holds for its peer, summed (``AnswerBufferLimits``).
    let heldAnswerBytes = Atomic<Int>(0)
    private let connections = Mutex<[ObjectIdentifier: any ServedConnection]>([:])

    /// Each method's call series, when the configuration has a registry.
    let callMetrics: RPCCallMetrics?

    init(configuration: ServerConfiguration, router: Router, logger: Logger, web: (any WebHandler)? = nil) {
        self.configuration = configuration
        self.router = router
        self.logger = logger
        self.web = web
        self.logLevel = logger.logLevel
        self.callLines = logger.handler as? any CallLineLogging
        callMetrics = configuration.metrics.map { registry in
            RPCCallMetrics(side: .server, paths: router.registeredMethods.map(\.path), registry: registry)
        }
        if let registry = configuration.metrics { registerGauges(in: registry) }
    }

    /// The server's in-flight figures, read when scraped from the counts it keeps anyway.
    private func registerGauges(in registry: MetricsRegistry) {
        registry.sampled("rpc_server_connections_open", type: .gauge, help: "Client connections open (HTTP/2 and HTTP/1.1).") {
            [weak self] in Double(self?.openConnectionCount.load(ordering: .relaxed) ?? 0)
        }
        registry.sampled("rpc_server_streams_open", type: .gauge, help: "HTTP/2 streams open, over every connection.") {
            [weak self] in Double(self?.openStreams.load(ordering: .relaxed) ?? 0)
        }
        registry.sampled("rpc_server_calls_in_flight", type: .gauge, help: "Calls and web requests being served.") {
            [weak self] in Double(self?.inFlight ?? 0)
        }
        registry.sampled(
            "rpc_server_answer_bytes_held", type: .gauge,
            help: "Answer bytes held for clients whose flow-control windows are shut, with each open stream's charge."
        ) { [weak self] in Double(self?.heldAnswerBytes.load(ordering: .relaxed) ?? 0) }
    }

    /// Counts a call that came as a web request (Connect, gRPC-Web) as started.
    func webCallStarted(path: String) {
        callMetrics?.method(path: path).start()
    }

    /// The series of the call on `stream`: its route's, found when it was routed, or — for a
    /// call refused before that — its path's (`_OTHER` for a path no method has), counted as
    /// started now.
    private func methodMetrics(of stream: ServerStream) -> MethodCallMetrics? {
        if let metrics = stream.methodMetrics { return metrics }
        guard let metrics = callMetrics?.method(path: stream.path) else { return nil }
        metrics.start()
        return metrics
    }

    var inFlight: Int { calls.load(ordering: .relaxed) }
    var openConnections: [any ServedConnection] { connections.withLock { Array($0.values) } }

    /// HTTP/2 streams open now, over every connection (`rpc_server_streams_open`).
    let openStreams = Atomic<Int>(0)

    /// Connections open now, kept beside the table for a read without its lock.
    let openConnectionCount = Atomic<Int>(0)

    func connectionOpened(_ connection: any ServedConnection) {
        let added = connections.withLock { $0.updateValue(connection, forKey: ObjectIdentifier(connection)) == nil }
        if added { openConnectionCount.add(1, ordering: .relaxed) }
    }

    func connectionClosed(_ connection: any ServedConnection) {
        let removed = connections.withLock { $0.removeValue(forKey: ObjectIdentifier(connection)) != nil }
        if removed { openConnectionCount.subtract(1, ordering: .relaxed) }
    }

    /// The refusal of a new call on a connection holding `held` bytes for its peer, while it
    /// — or the whole server with that connection above its share — holds more than its bound;
    /// nil when the call may go on.
    ///
    /// A connection's share, while the server is over its bound, is the bound divided among the
    /// open connections, at most ``AnswerBufferLimits/fairShare`` and at least
    /// ``AnswerBufferLimits/minimumShare``: however many connections a flood opens, what they
    /// hold together stays within about twice the bound, and a connection that reads its
    /// answers — holding next to nothing — is never refused.
    func answerBufferRefusal(heldByConnection held: Int) -> RPCError? {
        let limits = configuration.answerBuffer
        guard held > AnswerBufferLimits.minimumShare else { return nil }
        if held > limits.perConnection {
            return RPCError(
                code: .resourceExhausted, reason: "SERVER_BUSY",
                message: "This connection has \(held >> 10) KiB of answers waiting for the client to read them; read them, or retry later.")
        }
        guard heldAnswerBytes.load(ordering: .relaxed) > limits.perProcess else { return nil }
        let connections = max(1, openConnectionCount.load(ordering: .relaxed))
        let share = max(AnswerBufferLimits.minimumShare, min(limits.fairShare, limits.perProcess / connections))
        guard held > share else { return nil }
        return RPCError(
            code: .resourceExhausted, reason: "SERVER_BUSY",
            message: "The server holds too many unread answers; read this connection's, or retry later.")
    }

    func callStarted() { calls.add(1, ordering: .relaxed) }

    func callEnded() { calls.subtract(1, ordering: .relaxed) }

    /// Waits until no call is in flight or `limit` passes; returns whether calls drained.
    func waitForCalls(upTo limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while inFlight > 0 && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return inFlight == 0
    }

    /// Waits until every connection has closed or `limit` passes.
    func waitForConnections(upTo limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while !openConnections.isEmpty && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return openConnections.isEmpty
    }

    /// Logs a call's one line — request id, method, status, duration, peer: `status` is what the client got; `handlerStatus`, a server
    /// failure the call ended with before a reset replaced it (logged as `handler-status`).
    /// Writes a call's one log line. `httpStatus` is set for a request refused before it was a
    /// call (HTTP 405, 415): `status` is then what a gRPC client makes of that HTTP status, and
    /// the line is at info, the client's mistake rather than the server's failure.
    func logCall(
        stream: ServerStream, status: RPCError?, requestID: RequestID?, cause: (any Error)? = nil, handlerStatus: RPCError? = nil,
        httpStatus: Int? = nil
    ) {
        let elapsed = ContinuousClock.now - stream.startTime
        methodMetrics(of: stream)?.finish(
            code: status?.code, duration: elapsed, requestBytes: stream.receivedBytes, responseBytes: stream.bodyBytesSent)
        let trace = stream.trace ?? .serverSpan(metadata: stream.metadata)
        recordSpan(path: stream.path, trace: trace, duration: elapsed, status: status, peer: stream.connection.peer)
        let level: Logger.Level =
            if httpStatus != nil {
                .info
            } else if status?.code == .internal || status?.code == .unknown || handlerStatus != nil {
                .error
            } else if status == nil && stream.path == Self.healthCheckPath {
                .debug  // probes (the gateway's, every second; Kubernetes') would drown the log
            } else {
                .info
            }
        guard logLevel <= level else { return }
        let micros = elapsed / .microseconds(1)
        let line = CallLogLine(
            requestID: requestID?.description ?? "-", method: stream.path, status: status.map { $0.code.name } ?? "OK",
            reason: status?.reason, durationMilliseconds: Self.milliseconds(fromMicroseconds: Int(micros)),
            peer: stream.connection.peer, httpStatus: httpStatus, handlerStatus: handlerStatus?.code.name,
            cause: cause.map { String(describing: $0) }, clientRequestID: requestID?.clientNote,
            trace: trace)
        if let callLines {
            callLines.logCall(line, level: level)
        } else {
            logger.log(level: level, CallLogLine.message, metadata: line.metadata)
        }
    }

    /// Writes the one log line of a request served by the ``WebHandler``: a call's line with
    /// its RPC status when the handler noted one (a Connect or gRPC-Web call), else the
    /// request's path — never its query, where tokens travel — and HTTP status.
    func logWebRequest(
        path: String, status: RPCError?, httpStatus: Int, requestID: RequestID?, peer: String, arrival: ContinuousClock.Instant,
        isCall: Bool, trace: TraceContext? = nil, startCounted: Bool = false
    ) {
        let elapsed = ContinuousClock.now - arrival
        if isCall, let metrics = callMetrics?.method(path: path) {
            if !startCounted { metrics.start() }
            metrics.finish(code: status?.code, duration: elapsed, requestBytes: nil, responseBytes: nil)
        }
        if let trace { recordSpan(path: path, trace: trace, duration: elapsed, status: status, peer: peer) }
        // A call fails on the server's side with INTERNAL or UNKNOWN; a plain request with a 5xx
        // other than the overload answers (503, 504). A 4xx is the client's mistake: info.
        let serverFailure =
            isCall ? status?.code == .internal || status?.code == .unknown : httpStatus >= 500 && httpStatus != 503 && httpStatus != 504
        let level: Logger.Level =
            if serverFailure {
                .error
            } else if path == "/healthz" && httpStatus == 200 {
                .debug  // load balancers' probes
            } else {
                .info
            }
        guard logLevel <= level else { return }
        let micros = elapsed / .microseconds(1)
        let line = CallLogLine(
            requestID: requestID?.description ?? "-", method: String(path.prefix(256)), status: status.map { $0.code.name } ?? "OK",
            reason: status?.reason, durationMilliseconds: Self.milliseconds(fromMicroseconds: Int(micros)), peer: peer,
            httpStatus: httpStatus, clientRequestID: requestID?.clientNote, trace: trace)
        if let callLines {
            callLines.logCall(line, level: level)
        } else {
            logger.log(level: level, CallLogLine.message, metadata: line.metadata)
        }
    }

    /// Hands a served call's span to the configuration's recorder, if any. Health probes are
    /// left out: a span a second per prober would bury the shoppers' traces.
    /// A path no method has is named `/_OTHER`: a client chooses it.
    private func recordSpan(path: String, trace: TraceContext, duration: Duration, status: RPCError?, peer: String) {
        guard let spans = configuration.spans, path != Self.healthCheckPath else { return }
        let name = router.method(forPath: path) == nil ? "/_OTHER" : path
        spans.record(SpanRecord(path: name, kind: .server, trace: trace, duration: duration, code: status?.code, peer: peer))
    }

    /// The path of the health probe whose successful calls are logged at debug only.
    static let healthCheckPath = "/grpc.health.v1.Health/Check"

    /// `1234` µs as `"1.234"`.
    static func milliseconds(fromMicroseconds micros: Int) -> String {
        let fraction = String(micros % 1000)
        return "\(micros / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}
