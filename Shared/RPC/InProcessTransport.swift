internal import Foundation
public import Logging
internal import Synchronization

/// A client transport that calls a ``Router`` in this process: no sockets, no HTTP/2 — but the
/// semantics a call has on the wire. The router's interceptors run as for a call that arrived
/// over the network; metadata, the request id and the deadline reach the handler in its
/// ``ServerContext``; the deadline ends the call with `DEADLINE_EXCEEDED` and cancels the
/// handler; cancelling the call cancels the handler; an error reaches the caller as it would
/// through trailers (code, reason, details and message cut to the trailer limits, its cause
/// left behind); messages flow both ways with backpressure, for all four kinds of call.
///
/// What it cannot show is what only the wire shows: framing, flow control windows, HTTP/2
/// limits, connections. Tests of those run against the real server. Thread-safe.
public final class InProcessTransport: ClientTransport {
    /// The router the calls go to.
    public let router: Router
    /// The logger handlers' contexts carry.
    private let logger: Logger
    /// The peer handlers see (``ServerContext/peer``): what rate limits count callers by.
    private let peer: String
    private let closed = PortableAtomic<Bool>(false)
    /// The calls under way, which ``close()`` ends.
    private let calls = PortableMutex<[ObjectIdentifier: InProcessCall]>([:])

    /// A transport whose calls `router` serves, as if from `peer`, logging to `logger` (by
    /// default nowhere).
    public init(
        router: Router, peer: String = "127.0.0.1:0",
        logger: Logger = Logger(label: "storefront.in-process", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        self.router = router
        self.peer = peer
        self.logger = logger
    }

    /// Whether ``close()`` has been called.
    public var isClosed: Bool { closed.load(ordering: .acquiring) }

    /// Refuses further calls and ends those under way with `UNAVAILABLE`, as closing a
    /// connection does; their handlers are cancelled.
    public func close() async {
        closed.store(true, ordering: .releasing)
        let open = calls.withLock { calls in
            defer { calls.removeAll() }
            return Array(calls.values)
        }
        for call in open { call.end(with: RPCError(code: .unavailable, message: "The client is closed."), fromClient: true) }
    }

    /// Starts a call of the router's method at `path`, its handler in a task of its own.
    public func startCall(path: String, options: CallOptions, prepare: (any ClientCall) -> Void) throws(RPCError) -> any ClientCall {
        guard !isClosed else { throw RPCError(code: .unavailable, message: "The client is closed.") }
        if let deadline = options.deadline, deadline <= .now {
            throw RPCError(code: .deadlineExceeded, message: "The deadline passed before the call started.")
        }
        let call = InProcessCall(path: path) { [weak self] ended in
            self?.calls.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(ended)) }
        }
        calls.withLock { $0[ObjectIdentifier(call)] = call }
        if isClosed {  // closed since the check above: close() may have missed this call
            call.end(with: RPCError(code: .unavailable, message: "The client is closed."), fromClient: true)
        }
        prepare(call)
        guard let route = router.method(forPath: path) else {
            call.end(with: RPCError.unknownMethod(path))
            return call
        }
        var metadata = options.metadata
        if let requestID = options.requestID { metadata.set(MetadataKey.requestID, requestID.description) }
        if let span = options.trace?.child() { span.write(into: &metadata) }
        let context = ServerContext(
            method: route.info, metadata: metadata, deadline: options.deadline,
            requestID: metadata[MetadataKey.requestID].map(RequestID.init) ?? RequestID.next(), peer: peer, logger: logger)
        call.run(route, context: context)
        return call
    }
}

/// One call of an ``InProcessTransport`` as its caller sees it; its handler reads and writes
/// through ``HandlerSide``. Two message pipes join them, one each way.
final class InProcessCall: ClientCall {
    private struct State {
        var answered = false
        var headersSent = false
        var headerWaiters: [CheckedContinuation<Metadata, any Error>] = []
        /// The status once the call has ended: `.some(nil)` for OK.
        var status: RPCError??
        var handler: Task<Void, Never>?
        var deadlineTimer: Task<Void, Never>?
    }

    /// Messages a call may have waiting in each direction before its sender suspends.
    static let pipeCapacity = 8

    let path: String
    /// The client's messages to the handler.
    fileprivate let requests = MessagePipe(capacity: pipeCapacity)
    /// The handler's messages to the client.
    private let responses = MessagePipe(capacity: pipeCapacity)
    private let state = PortableMutex(State())
    /// Told once, when the call ends (its transport stops tracking it).
    private let onEnd: @Sendable (InProcessCall) -> Void

    init(path: String, onEnd: @escaping @Sendable (InProcessCall) -> Void) {
        self.path = path
        self.onEnd = onEnd
    }

    /// Runs `route`'s interceptors and handler in a task, and arms the deadline — unless the
    /// call has ended already (cancelled as it started): then no handler runs.
    func run(_ route: RegisteredMethod, context: ServerContext) {
        guard state.withLock({ $0.status == nil }) else { return }
        let io = HandlerSide(call: self)
        let handler = Task {
            var context = context
            do {
                try await route.interceptors.prepare(&context)
                try await route.handler(io, context)
                end(with: nil)
            } catch {
                end(with: RPCError(converting: error))
            }
        }
        let timer = context.deadline.map { deadline in
            Task { [weak self] in
                guard (try? await Task.sleep(until: deadline, clock: .continuous)) != nil else { return }
                self?.end(with: RPCError(code: .deadlineExceeded, message: "The deadline passed."), fromClient: true)
            }
        }
        let ended = state.withLock { state in
            state.handler = handler
            state.deadlineTimer = timer
            return state.status != nil
        }
        if ended {
            handler.cancel()
            timer?.cancel()
        }
    }

    /// Ends the call with `status` (nil for OK) unless it has ended. From the handler's side
    /// the caller reads the messages written before it, then the status as the wire would
    /// carry it (``RPCError/trailers``, read back); from the client's side (a cancellation, the
    /// deadline) it is no answer of the server's, and the caller gets it at once. A handler
    /// still running is cancelled, and a sender still waiting is let go.
    func end(with status: RPCError?, fromClient: Bool = false) {
        let wireStatus = fromClient ? status : status.map(\.asReceived)
        let ended = state.withLock { state -> (waiters: [CheckedContinuation<Metadata, any Error>], tasks: [Task<Void, Never>])? in
            guard state.status == nil else { return nil }
            state.status = .some(wireStatus)
            if !fromClient { state.answered = true }
            defer { state.headerWaiters = [] }
            return (state.headersSent ? [] : state.headerWaiters, [state.handler, state.deadlineTimer].compactMap(\.self))
        }
        guard let ended else { return }
        onEnd(self)
        if fromClient, let wireStatus {
            responses.fail(wireStatus)
        } else {
            responses.finish(wireStatus)
        }
        requests.close(releasingWritersWith: wireStatus)
        for waiter in ended.waiters {
            if let wireStatus { waiter.resume(throwing: wireStatus) } else { waiter.resume(returning: Metadata()) }
        }
        for task in ended.tasks { task.cancel() }
    }

    // MARK: The client's side

    /// Sends a request message, suspending while the handler has ``pipeCapacity`` unread.
    func send(_ message: Data) async throws {
        try await requests.write(message)
    }

    /// Half-closes: the handler's next read after the messages sent is nil.
    func finishSending() {
        requests.finish(nil)
    }

    /// The next response message; nil after the last of a successful call.
    func nextMessage() async throws -> Data? {
        try await responses.next()
    }

    /// The response headers: sent with the handler's first message; none when the call ended
    /// OK without any, the status when it failed without any.
    func responseHeaders() async throws -> Metadata {
        try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLock { state -> Result<Metadata, any Error>? in
                if state.headersSent { return .success(Self.headers) }
                switch state.status {
                case .some(.some(let error)): return .failure(error)
                case .some(.none): return .success(Metadata())
                case .none:
                    state.headerWaiters.append(continuation)
                    return nil
                }
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    /// Whether the handler has written a message.
    var hasResponseHeaders: Bool { state.withLock { $0.headersSent } }

    /// Whether the handler wrote or ended the call (rather than the caller ending it).
    var serverAnswered: Bool { state.withLock { $0.answered } }

    /// Ends the call with `CANCELLED` and cancels its handler.
    func cancel() {
        end(with: .callCancelled, fromClient: true)
    }

    /// The response headers a handler's first message brings.
    private static let headers: Metadata = {
        var headers = Metadata()
        headers.add("content-type", "application/grpc+json")
        return headers
    }()

    // MARK: The handler's side

    /// Sends a response message; the first brings the response headers.
    fileprivate func writeResponse(_ message: Data) async throws {
        let waiters = state.withLock { state -> [CheckedContinuation<Metadata, any Error>] in
            guard !state.headersSent, state.status == nil else { return [] }
            state.headersSent = true
            state.answered = true
            defer { state.headerWaiters = [] }
            return state.headerWaiters
        }
        for waiter in waiters { waiter.resume(returning: Self.headers) }
        try await responses.write(message)
    }
}

extension RPCError {
    /// The error as a client receives it through trailers: the message and details cut to the
    /// trailer limits, the cause (which never crosses the wire) left behind.
    var asReceived: RPCError {
        var trailers = Metadata()
        for (name, value) in self.trailers { trailers.add(name, value) }
        return RPCError.fromTrailers(trailers, httpStatus: 200) ?? self
    }
}

/// The handler's side of an ``InProcessCall``.
private struct HandlerSide: ServerCallIO {
    let call: InProcessCall

    /// The next request message, or nil once the client half-closed.
    func nextMessage() async throws -> Data? {
        try await call.requests.next()
    }

    /// Sends one response message.
    func write(_ message: Data) async throws {
        try await call.writeResponse(message)
    }
}

/// Messages from one side of an in-process call to the other: past `capacity` waiting, the
/// writer suspends (backpressure), then an end — OK (nil after the messages) or an error
/// (thrown after them) — or a failure, which the reader gets at once. Thread-safe.
final class MessagePipe: Sendable {
    private struct State {
        var messages: [Data] = []
        var head = 0
        var reader: CheckedContinuation<Data?, any Error>?
        var writers: [CheckedContinuation<Void, any Error>] = []
        /// How the messages end, once they do: nil for OK.
        var end: RPCError??
        /// What a write gets once no more may be written.
        var closed: RPCError?
        var waiting: Int { messages.count - head }
    }

    private let capacity: Int
    private let state = PortableMutex(State())

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Queues `message` (or hands it to the waiting reader), then suspends while more than
    /// `capacity` messages wait. Throws once the pipe is closed or failed.
    func write(_ message: Data) async throws {
        let (reader, mustWait) = try state.withLock { state throws(RPCError) -> (CheckedContinuation<Data?, any Error>?, Bool) in
            if let closed = state.closed { throw closed }
            if state.end != nil { throw RPCError(code: .internal, message: "The call has already finished sending.") }
            if let reader = state.reader {
                state.reader = nil
                return (reader, false)
            }
            state.messages.append(message)
            return (nil, state.waiting > capacity)
        }
        reader?.resume(returning: message)
        guard mustWait else { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome = state.withLock { state -> Result<Void, any Error>? in
                if let closed = state.closed { return .failure(closed) }
                if state.waiting <= capacity { return .success(()) }
                state.writers.append(continuation)
                return nil
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    /// The next message; nil after the last when the pipe ended OK; the error it ended or
    /// failed with otherwise.
    func next() async throws -> Data? {
        try await withCheckedThrowingContinuation { continuation in
            let (outcome, writer) = state.withLock { state -> (Result<Data?, any Error>?, CheckedContinuation<Void, any Error>?) in
                if state.head < state.messages.count {
                    let message = state.messages[state.head]
                    state.head += 1
                    if state.head == state.messages.count {
                        state.messages.removeAll(keepingCapacity: true)
                        state.head = 0
                    } else if state.head >= capacity {
                        // A queue a writer keeps topped up never empties: drop what was read.
                        state.messages.removeFirst(state.head)
                        state.head = 0
                    }
                    let writer = state.waiting <= capacity && !state.writers.isEmpty ? state.writers.removeFirst() : nil
                    return (.success(message), writer)
                }
                switch state.end {
                case .some(.some(let error)): return (.failure(error), nil)
                case .some(.none): return (.success(nil), nil)
                case .none:
                    state.reader = continuation
                    return (nil, nil)
                }
            }
            writer?.resume()
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    /// Ends the messages: OK (`status` nil) or with `status`, read after those queued.
    func finish(_ status: RPCError?) {
        let reader = state.withLock { state -> CheckedContinuation<Data?, any Error>? in
            guard state.end == nil else { return nil }
            state.end = .some(status)
            defer { state.reader = nil }
            return state.reader
        }
        guard let reader else { return }
        if let status { reader.resume(throwing: status) } else { reader.resume(returning: nil) }
    }

    /// Fails the pipe: the reader gets `error` at once, queued messages are dropped, and
    /// writers — waiting and later — get `error`.
    func fail(_ error: RPCError) {
        let (reader, writers) = state.withLock { state in
            state.messages.removeAll()
            state.head = 0
            state.end = .some(error)
            state.closed = error
            defer {
                state.reader = nil
                state.writers = []
            }
            return (state.reader, state.writers)
        }
        reader?.resume(throwing: error)
        for writer in writers { writer.resume(throwing: error) }
    }

    /// No more may be written: the call is over. Writers waiting are let go — with `status`
    /// when the call failed, quietly when it ended OK (nothing will read what they sent) —
    /// and later writes fail. The reader, if any, gets nil or the status.
    func close(releasingWritersWith status: RPCError?) {
        let (reader, writers) = state.withLock { state in
            state.closed = status ?? RPCError(code: .internal, message: "The call has already finished.")
            if state.end == nil { state.end = .some(status) }
            defer {
                state.reader = nil
                state.writers = []
            }
            return (state.reader, state.writers)
        }
        if let status {
            reader?.resume(throwing: status)
            for writer in writers { writer.resume(throwing: status) }
        } else {
            reader?.resume(returning: nil)
            for writer in writers { writer.resume() }
        }
    }
}
