public import Foundation
public import RPC
internal import Synchronization

/// One outgoing call on an HTTP/2 stream: request messages out, response messages in, and the
/// final status.
///
/// Thread-safe: the calling task uses the public methods; the connection's loop thread
/// feeds responses and drains requests. Loop-only fields are marked as such.
public final class HTTP2ClientCall: ClientCall, @unchecked Sendable {
    // Invariant for @unchecked Sendable: `shared` is behind a Mutex; the loop-only fields are
    // touched only on the loop of `connection` once the call is submitted.
    struct Shared {
        var buffers = StreamBuffers()
        var sendClosed = false
        /// The response headers once they came: the content type apart from the rest, so a
        /// call whose only header is its content type (nearly all) builds no list for it.
        var responseHead: (contentType: String, rest: Metadata)?
        var headersWaiters: [HeadersWaiter] = []
        var status: Result<Void, RPCError>?
        /// For a unary call made without a task (``HTTP2ClientTransport/startUnaryCall(path:request:options:observer:prepare:)``):
        /// told the single response message, or the error, when the call ends.
        var observer: (any UnaryCallObserver)?
        /// Bytes of request messages sent and response messages received, each with its 5-byte
        /// gRPC prefix, as the server counts them (counted only when the call has ``CallTelemetry``).
        var messageBytes: (sent: Int, received: Int) = (0, 0)
    }

    /// A task waiting for the response headers; taken out under the lock before it is resumed.
    typealias HeadersWaiter = CheckedContinuation<Metadata, any Error>

    let shared = Mutex(Shared())
    /// The request's header fields.
    let head: RequestHead
    /// The method path.
    public var path: String { head.path }
    /// The time left before the deadline when the call was made: its deadline timer's delay,
    /// so starting the call needs no clock reading of its own.
    let timeLeft: Duration?
    /// Where the call is counted and its span recorded when it ends; nil when neither is wanted.
    let telemetry: CallTelemetry?
    private let connectionBox = Mutex<ClientConnection?>(nil)

    // Loop only.
    var streamID: Int32 = -1
    var deframer: MessageDeframer
    var httpStatus = 0
    var receivedHeaders = false
    /// The response headers but the content type, which is kept apart (``responseContentType``).
    var responseMetadata = Metadata()
    var responseContentType = ""
    var trailers = Metadata()
    /// Whether the trailers' (first) `grpc-status` was `0`: read from bytes, not kept in
    /// `trailers`, since nothing else in them changes the outcome of a successful call.
    var trailersSaidOK = false
    var deadlineTimer: UInt64?
    /// Whether the call is counted as waiting for a stream slot: submitted, its HEADERS not
    /// yet sent (``ClientConnection``'s `rpc_client_calls_waiting`).
    var awaitsStreamSlot = false
    /// When the deadline passes (monotonic ns), once its timer is armed; `.max` before or without one.
    var deadlineAt: UInt64 = .max
    /// Received bytes whose window is withheld until the caller reads (inbound backpressure).
    var ungranted = 0

    init(head: RequestHead, timeLeft: Duration?, maxMessageSize: Int, telemetry: CallTelemetry? = nil) {
        self.head = head
        self.timeLeft = timeLeft
        self.telemetry = telemetry
        self.deframer = MessageDeframer(maxMessageSize: maxMessageSize)
    }

    var connection: ClientConnection? {
        get { connectionBox.withLock { $0 } }
        set { connectionBox.withLock { $0 = newValue } }
    }

    /// Stops a debug build when a loop-side method runs off the loop of the connection the call
    /// was given (``EventLoop/assertInLoop()``). Nothing in release builds: `assert` evaluates
    /// nothing there, not even the lock that reads ``connection``.
    @inline(__always)
    private func assertOnLoop(file: StaticString = #fileID, line: UInt = #line) {
        assert(connection?.loop.inEventLoop ?? true, "a call's loop-side method off its loop", file: file, line: line)
    }

    // MARK: Caller side

    /// Sends one request message, suspending while too many bytes wait to be sent.
    public func send(_ message: Data) async throws {
        let outcome = shared.withLock { state -> Result<(schedule: Bool, wait: Bool), RPCError> in
            if let status = state.status, case .failure(let error) = status { return .failure(error) }
            if state.sendClosed || state.status != nil {
                return .failure(RPCError(code: .internal, message: "The call has already finished sending."))
            }
            state.messageBytes.sent &+= message.count &+ MessageFraming.prefixSize
            return .success(state.buffers.enqueue(message))
        }
        let (schedule, wait) = try outcome.get()
        if schedule { connection?.scheduleFlush(self) }
        guard wait else { return }
        try await StreamBuffers.waitUntilDrained { continuation in
            shared.withLock { state in
                if let cancellation = state.buffers.cancellation { return .failure(cancellation) }
                switch state.status {
                case .failure(let error): return .failure(error)
                case .success: return .success(true)  // the call is over; nothing will drain
                case nil: return .success(state.buffers.proceedOrWait(continuation))
                }
            }
        }
    }

    /// Half-closes: no more request messages.
    public func finishSending() {
        let schedule = shared.withLock { state -> Bool in
            guard !state.sendClosed else { return false }
            state.sendClosed = true
            defer { state.buffers.flushScheduled = true }
            return !state.buffers.flushScheduled
        }
        if schedule { connection?.scheduleFlush(self) }
    }

    /// The next response message; `nil` after the last one of a successful call.
    /// - Throws: the call's ``RPCError`` once the messages before it have been read.
    public func nextMessage() async throws -> Data? {
        try await StreamBuffers.nextMessage(
            take: { continuation in shared.withLock { $0.buffers.take(continuation) } },
            regrant: { connection?.scheduleFlush(self) })
    }

    /// The response headers (initial metadata), once they arrive; none (empty) when the call
    /// ended without any (a Trailers-Only answer).
    public func responseHeaders() async throws -> Metadata {
        try await withCheckedThrowingContinuation { continuation in
            let ready = shared.withLock { state -> Result<Metadata, RPCError>? in
                if let head = state.responseHead { return .success(Self.headers(head)) }
                switch state.status {
                // Ended without headers (Trailers-Only): none will come.
                case .success: return .success(Metadata())
                case .failure(let error): return .failure(error)
                case nil: state.headersWaiters.append(continuation)
                }
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    /// Whether response headers have arrived (a retry is no longer transparent after that).
    public var hasResponseHeaders: Bool { shared.withLock { $0.responseHead != nil } }

    /// Whether the server answered at all — headers, or a Trailers-Only status — as opposed
    /// to a call that failed for want of a connection (what a circuit breaker counts).
    public var serverAnswered: Bool { answered.load(ordering: .acquiring) }
    let answered = Atomic<Bool>(false)

    /// Cancels the call: RST_STREAM(CANCEL) to the server, `CANCELLED` to readers at once
    /// (messages not read yet are dropped: the caller no longer wants them).
    public func cancel() {
        complete(.failure(.callCancelled), resetStream: true, droppingUnread: true)
    }

    /// Sets up a unary call made without a task before it is submitted: the one request
    /// message, sending closed, and whom to tell when the call ends.
    func prepareUnary(_ message: Data, observer: any UnaryCallObserver) {
        shared.withLock { state in
            _ = state.buffers.enqueue(message)
            state.messageBytes.sent &+= message.count &+ MessageFraming.prefixSize
            state.sendClosed = true
            state.observer = observer
        }
    }

    /// The single response message of a finished unary call; its error otherwise.
    private static func unaryOutcome(_ status: Result<Void, RPCError>, buffers: inout StreamBuffers) -> Result<Data, RPCError> {
        if case .failure(let error) = status { return .failure(error) }
        guard case .message(let message, _) = buffers.take(nil) else { return .failure(.noResponseMessage) }
        guard case .end = buffers.take(nil) else { return .failure(.extraResponseMessage) }
        return .success(message)
    }

    // MARK: Loop side

    /// Whether the call has ended (its status is set). Any thread.
    package var hasEnded: Bool { shared.withLock { $0.status != nil } }

    /// Ends the call with a status, waking every waiter; optionally resets the stream. The
    /// messages received before a failure are read before it, as the server sent them —
    /// unless `droppingUnread`, for the ends the caller itself chose (cancel, its deadline),
    /// which readers meet at once, as the in-process transport does.
    func complete(_ status: Result<Void, RPCError>, resetStream: Bool = false, droppingUnread: Bool = false) {
        let (reader, writer, headerWaiters, first, unary, bytes) = shared.withLock { state in
            guard state.status == nil else {
                return (
                    StreamBuffers.Reader?.none, StreamBuffers.Writer?.none, [HeadersWaiter](), false,
                    ((any UnaryCallObserver), Result<Data, RPCError>)?.none, state.messageBytes)
            }
            state.status = status
            let reader = state.buffers.endInbound(status.mapError { $0 as any Error })
            // A writer waiting for its bytes to drain is let go either way: after an OK status
            // (the server answered without reading them all) nothing drains any more.
            let writer: StreamBuffers.Writer? =
                switch status {
                case .failure(let error) where droppingUnread: state.buffers.cancel(error).1
                case .failure, .success: state.buffers.takeWriter()
                }
            var unary: ((any UnaryCallObserver), Result<Data, RPCError>)?
            if let observer = state.observer {
                unary = (observer, Self.unaryOutcome(status, buffers: &state.buffers))
                state.observer = nil
            }
            defer { state.headersWaiters.removeAll() }
            return (reader, writer, state.responseHead == nil ? state.headersWaiters : [], true, unary, state.messageBytes)
        }
        guard first else { return }
        if let telemetry { telemetry.callEnded(path: head.path, trace: head.trace, status: status, bytes: bytes) }
        if resetStream { connection?.reset(self) }
        if let (observer, outcome) = unary { observer.unaryCall(self, endedWith: outcome) }
        switch status {
        case .success:
            reader?.resume(returning: nil)
            writer?.resume()
            for waiter in headerWaiters { waiter.resume(returning: Metadata()) }
        case .failure(let error):
            reader?.resume(throwing: error)
            writer?.resume(throwing: error)
            for waiter in headerWaiters { waiter.resume(throwing: error) }
        }
    }

    /// Records the response headers: the content type and the other headers.
    func didReceiveHeaders(contentType: String, rest: Metadata) {
        assertOnLoop()
        let waiters = shared.withLock { state in
            state.responseHead = (contentType, rest)
            defer { state.headersWaiters.removeAll() }
            return state.headersWaiters
        }
        guard !waiters.isEmpty else { return }
        let headers = Self.headers((contentType, rest))
        for waiter in waiters { waiter.resume(returning: headers) }
    }

    /// The response headers as callers see them: the content type first, as it came, then the rest.
    private static func headers(_ head: (contentType: String, rest: Metadata)) -> Metadata {
        guard !head.contentType.isEmpty else { return head.rest }
        var headers = Metadata()
        headers.add("content-type", head.contentType)
        for entry in head.rest { headers.add(entry.name, entry.value) }
        return headers
    }

    /// Queues a response message for the reader; returns whether window may be granted.
    func deliver(_ message: Data) -> Bool {
        assertOnLoop()
        let (handoff, belowMark, extra) = shared.withLock { state -> ((StreamBuffers.Reader, Data)?, Bool, Bool) in
            // A unary call made without a task has no reader: it keeps its one message (at most
            // the message size limit) with the window granted, and a second one ends it.
            state.messageBytes.received &+= message.count &+ MessageFraming.prefixSize
            if state.observer != nil {
                if state.buffers.queuedMessages > 0 { return (nil, true, true) }
                return (state.buffers.deliver(message), true, false)
            }
            return (state.buffers.deliver(message), state.buffers.belowInboundMark, false)
        }
        if extra {
            complete(.failure(.extraResponseMessage), resetStream: true)
            return true
        }
        if let (reader, message) = handoff { reader.resume(returning: message) }
        return belowMark
    }

    /// Whether withheld window may be granted: the reader has caught up — or there is no
    /// reader, in a unary call made without a task, which never holds more than one message.
    var canGrantWindow: Bool { shared.withLock { $0.observer != nil || $0.buffers.belowInboundMark } }

    /// Copies request bytes into nghttp2's buffer.
    func readBody(into buffer: UnsafeMutableRawBufferPointer) -> HTTP2BodyRead {
        assertOnLoop()
        let (result, writer) = shared.withLock { state -> (HTTP2BodyRead, StreamBuffers.Writer?) in
            let (count, writer) = state.buffers.drain(into: buffer)
            if state.buffers.unsent == 0 && state.sendClosed {
                return (.bytes(count: count, end: true, trailers: nil), writer)
            }
            if count == 0 {
                state.buffers.flushScheduled = false
                return (.deferred, writer)
            }
            return (.bytes(count: count, end: false, trailers: nil), writer)
        }
        writer?.resume()
        return result
    }
}

extension HTTP2ClientCall: LoopTimerTarget {
    /// The deadline timer fired (see ``ClientConnection/deadlinePassed(_:)``). Loop only.
    func loopTimerFired() {
        assertOnLoop()
        connection?.deadlinePassed(self)
    }
}
