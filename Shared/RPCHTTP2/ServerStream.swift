internal import Foundation
internal import RPC
internal import Telemetry
internal import Synchronization

/// One server call, shared by its connection's loop thread and its handler task.
///
/// The loop feeds request messages in and drains framed response bytes out; the handler
/// reads messages and writes responses through ``ServerCallIO``. Thread-safety: the fields
/// under "loop only" are touched on the loop thread only; everything the handler touches is
/// in `shared`, behind a Mutex.
final class ServerStream: ServerCallIO, CallAnswerReceiver, LoopTimerTarget, @unchecked Sendable {
    struct Shared {
        var buffers = StreamBuffers()
        var trailers: HTTP2HeaderBlock?
        var status: RPCError?
        var finished = false
        /// Whether the stream counts its charge (``AnswerBufferLimits/streamCharge``): from the
        /// call's admission, and whenever a message is queued, until its answer has all gone out.
        var charged = false
        var task: Task<Void, Never>?
        /// The responder of a callback handler, cancelled with the call.
        var responder: CallResponder?
        /// The status and headers of an answer to a request that is not gRPC (``WebResponse``),
        /// once given; such an answer ends without trailers once `webEnded`.
        var webHead: [(String, String)]?
        var webEnded = false
        /// What stops a web handler's work when the request is cancelled.
        var cancelActions: [@Sendable () -> Void] = []
        /// The error trailers as fields, for a Trailers-Only response.
        var errorTrailers: [(String, String)] { status?.trailers ?? RPCError.okTrailers }
    }

    let shared = Mutex(Shared())
    /// The stream id.
    let id: Int32
    /// Strong on purpose: a handler may outlive its connection (closed under it) and must still
    /// be able to finish; the cycle through `ServerConnection.streams` ends when the stream does.
    let connection: ServerConnection

    // Loop only.
    var path = ""
    var httpMethod = ""
    var contentType = ""
    var timeout: String?
    var encoding: String?
    var metadata = Metadata()
    var headerBytes = 0
    /// The stream's life cycle: its request arriving and ending, its handler started, its
    /// response submitted, its reset and close.
    var lifecycle = ServerStreamStateMachine()
    var route: RegisteredMethod?
    /// The route's call series, counted as started when the call was routed; nil without metrics.
    var methodMetrics: MethodCallMetrics?
    var deframer: MessageDeframer
    var ungranted = 0
    /// Request body bytes received so far.
    var receivedBytes = 0
    var deadlineTimer: UInt64?
    var deadline: ContinuousClock.Instant?
    /// The call's request id, once its handler has started: for its log line.
    var requestID: RequestID?
    /// Response body bytes handed to nghttp2 so far.
    var bodyBytesSent = 0
    /// The sent count and time (monotonic ns) when bytes were last seen waiting with no progress
    /// (``sendStalled(now:for:windowShut:)``).
    var stallMark: (sent: Int, since: UInt64)?
    /// The body of a request that is not gRPC, gathered whole for the ``WebHandler``; nil for
    /// a gRPC call. Read on a call's path only once it has no route (``isWeb``).
    var webBody: Data?
    /// The answer to such a request, once dispatched.
    var webResponse: HTTP2WebResponse?

    /// Whether this stream is a request for the ``WebHandler``: never a routed gRPC call, whose
    /// check stops at `route`.
    var isWeb: Bool { route == nil && webBody != nil }
    let startTime = ContinuousClock.now

    init(id: Int32, connection: ServerConnection, maxMessageSize: Int) {
        self.id = id
        self.connection = connection
        self.deframer = MessageDeframer(maxMessageSize: maxMessageSize)
    }

    // MARK: ServerCallIO (handler side)

    func nextMessage() async throws -> Data? {
        try await StreamBuffers.nextMessage(
            take: { continuation in shared.withLock { $0.buffers.take(continuation) } },
            regrant: { connection.scheduleFlush(self) })
    }

    func write(_ message: Data) async throws {
        guard try enqueue(message) else { return }
        try await StreamBuffers.waitUntilDrained { continuation in
            shared.withLock { state in
                if let cancellation = state.buffers.cancellation { return .failure(cancellation) }
                return .success(state.buffers.proceedOrWait(continuation))
            }
        }
    }

    /// Queues a response message for sending; returns whether the writer should wait for
    /// unsent bytes to drain.
    private func enqueue(_ message: Data) throws -> Bool {
        let outcome = shared.withLock { state -> (schedule: Bool, wait: Bool, newCharge: Bool, overhead: Int)? in
            if state.finished || state.webEnded || state.buffers.cancellation != nil { return nil }
            let newCharge = !state.charged
            state.charged = true
            let (schedule, wait) = state.buffers.enqueue(message)
            return (schedule, wait, newCharge, state.buffers.framingOverhead)
        }
        guard let outcome else { throw CancellationError() }
        let charge = outcome.newCharge ? connection.streamCharge : 0
        connection.holdAnswerBytes(outcome.overhead + message.count + charge)
        if outcome.schedule { connection.scheduleFlush(self) }
        return outcome.wait
    }

    // MARK: Immediate calls (loop side, no task)

    /// The one request message of a unary call whose request has fully arrived, taken without
    /// waiting; zero or two messages throw the cardinality errors ``Router`` uses.
    func takeSingleRequestNow() throws -> Data {
        connection.loop.assertInLoop()
        let (first, second) = shared.withLock { ($0.buffers.take(nil), $0.buffers.take(nil)) }
        switch first {
        case .message(let message, _):
            switch second {
            case .end(let end):
                try end.get()
                return message
            case .message: throw Router.extraRequestMessage
            case .wait: preconditionFailure("an immediate call started before its request ended")
            }
        case .end(let end):
            try end.get()
            throw Router.noRequestMessage
        case .wait: preconditionFailure("an immediate call started before its request ended")
        }
    }

    /// Queues the response message of an immediate or callback call. One message is buffered
    /// whatever its size, as a handler's single write would be. Any thread: a callback
    /// handler answers from wherever its work ends.
    func writeNow(_ message: Data) throws {
        _ = try enqueue(message)
    }

    /// Ends the call with a status (`nil` for OK); later calls are ignored. Returns the status
    /// that actually ended the call. Callable from any thread.
    @discardableResult
    func finish(_ status: RPCError?) -> RPCError? {
        let (schedule, effective) = shared.withLock { state -> (Bool, RPCError?) in
            if state.finished { return (false, state.status) }
            state.finished = true
            state.status = status
            state.trailers = status.map { HTTP2HeaderBlock($0.trailers) } ?? .ok
            let schedule = !state.buffers.flushScheduled
            state.buffers.flushScheduled = true
            return (schedule, status)
        }
        if schedule { connection.scheduleFlush(self) }
        return effective
    }

    /// Ends the call with `error` (unless it already ended) and stops its handler: what the
    /// loop does when the client, the connection or a timeout ends a call. Any thread.
    func abort(_ error: RPCError) {
        finish(error)
        cancel()
    }

    /// Cancels the handler and fails its waiting reads and writes. Callable from any thread.
    func cancel() {
        let (reader, writer, task, responder, actions) = shared.withLock { state in
            let (reader, writer) = state.buffers.cancel(CancellationError())
            defer {
                state.responder = nil
                if !state.cancelActions.isEmpty { state.cancelActions = [] }
            }
            return (reader, writer, state.task, state.responder, state.cancelActions)
        }
        reader?.resume(throwing: CancellationError())
        writer?.resume(throwing: CancellationError())
        task?.cancel()
        responder?.cancel()
        for action in actions { action() }
    }

    // MARK: Answers to requests that are not gRPC (HTTP2WebResponse)

    /// Gives the answer's status and headers, with the whole body (`end`) or its start. Any thread.
    func startWebAnswer(head: [(String, String)], body: Data?, end: Bool) {
        let held = shared.withLock { state -> Int? in
            guard state.webHead == nil, state.buffers.cancellation == nil else { return nil }
            state.webHead = head
            var held = 0
            if let body, !body.isEmpty {
                _ = state.buffers.enqueue(body)
                held = body.count + (state.charged ? 0 : connection.streamCharge)
                state.charged = true
            }
            if end {
                state.webEnded = true
                state.finished = true
            }
            state.buffers.flushScheduled = true
            return held
        }
        guard let held else { return }
        if held > 0 { connection.holdAnswerBytes(held) }
        connection.scheduleFlush(self)
    }

    /// Ends a started answer's body. Any thread.
    func endWebAnswer() {
        let schedule = shared.withLock { state -> Bool in
            guard state.webHead != nil, !state.webEnded else { return false }
            state.webEnded = true
            state.finished = true
            state.buffers.flushScheduled = true
            return true
        }
        if schedule { connection.scheduleFlush(self) }
    }

    /// Registers what stops a web handler's work when the request is cancelled; runs it at
    /// once when it already is. Any thread.
    func addCancelAction(_ action: @escaping @Sendable () -> Void) {
        let runNow = shared.withLock { state -> Bool in
            if state.buffers.cancellation != nil { return true }
            state.cancelActions.append(action)
            return false
        }
        if runNow { action() }
    }

    /// Makes and attaches a callback handler's responder, which answers through this stream and
    /// is cancelled with the call (at once when it already is).
    func attachResponder() -> CallResponder {
        let responder = CallResponder(receiver: self)
        let cancelled = shared.withLock { state -> Bool in
            state.responder = responder
            return state.buffers.cancellation != nil
        }
        if cancelled { responder.cancel() }
        return responder
    }

    /// A callback handler's answer: ends the call with it and lets go of the responder (which
    /// holds this stream in turn). Any thread.
    func receiveAnswer(_ result: Result<Data, any Error>) {
        shared.withLock { $0.responder = nil }
        connection.answer(self, with: result)
        connection.callbackEnded()
    }

    // MARK: Loop side

    /// Starts counting the stream's charge as its call is admitted: its answer is on its way,
    /// and a flood of calls whose answers are not written yet must count before they are.
    func chargeOnAdmission() {
        connection.loop.assertInLoop()
        let newCharge = shared.withLock { state -> Bool in
            defer { state.charged = true }
            return !state.charged
        }
        if newCharge { connection.holdAnswerBytes(connection.streamCharge) }
    }

    /// The deadline timer fired (see ``ServerConnection/deadlinePassed(_:)``).
    func loopTimerFired() {
        connection.loop.assertInLoop()
        connection.deadlinePassed(self)
    }

    /// Queues decoded request messages for the handler; returns whether window may be granted.
    func deliver(_ message: Data) -> Bool {
        connection.loop.assertInLoop()
        let (handoff, belowMark) = shared.withLock { ($0.buffers.deliver(message), $0.buffers.belowInboundMark) }
        if let (reader, message) = handoff { reader.resume(returning: message) }
        return belowMark
    }

    /// Marks the request as complete; a waiting reader sees the end.
    func endInbound() {
        connection.loop.assertInLoop()
        shared.withLock { $0.buffers.endInbound(.success(())) }?.resume(returning: nil)
    }

    /// Whether the handler has drained enough that withheld window may be granted.
    var canGrantWindow: Bool { shared.withLock { $0.buffers.belowInboundMark } }

    /// Copies unsent response bytes into nghttp2's buffer (called from the body read callback).
    func readBody(into buffer: UnsafeMutableRawBufferPointer) -> HTTP2BodyRead {
        connection.loop.assertInLoop()
        let (result, writer, count, emptied) = shared.withLock { state -> (HTTP2BodyRead, StreamBuffers.Writer?, Int, Bool) in
            let (count, writer) = state.buffers.drain(into: buffer)
            let emptied = state.charged && state.buffers.unsent == 0
            if emptied { state.charged = false }
            if state.buffers.unsent == 0, state.webEnded {
                return (.bytes(count: count, end: true, trailers: nil), writer, count, emptied)
            }
            if state.buffers.unsent == 0, let trailers = state.trailers {
                return (.bytes(count: count, end: true, trailers: trailers), writer, count, emptied)
            }
            if count == 0 {
                state.buffers.flushScheduled = false
                return (.deferred, writer, 0, false)
            }
            return (.bytes(count: count, end: false, trailers: nil), writer, count, emptied)
        }
        bodyBytesSent &+= count
        let released = count + (emptied ? connection.streamCharge : 0)
        if released > 0 { connection.releaseAnswerBytes(released) }
        writer?.resume()
        return result
    }

    /// Whether a whole answer has waited `timeout` on a flow-control window the peer keeps shut
    /// (`windowShut`), none of it taken: called now and then (``ServerConnection``'s
    /// housekeeping), it notes the sent count and the time when it first finds the answer
    /// waiting, and starts over whenever some went out or the window opened.
    ///
    /// An answer is whole once the call has finished, or — for a method with one response —
    /// once its message is written: a large one (above the outbound mark) keeps its handler
    /// waiting in `write` for the bytes to drain, so the call never finishes by itself. A
    /// streaming answer still being written is left alone: its writer waits on backpressure,
    /// so what it holds is bounded, and a watch's slow reader gets the latest state when it
    /// reads (API.md). So is an answer merely queued behind other streams on an open window.
    func sendStalled(now: UInt64, for timeout: UInt64, windowShut: Bool) -> Bool {
        connection.loop.assertInLoop()
        let singleResponse = route?.info.kind.isUnaryResponse ?? true
        let waiting = shared.withLock { state in
            (state.finished || (singleResponse && state.buffers.everWrote)) && state.buffers.unsent > 0
        }
        guard waiting && windowShut else {
            stallMark = nil
            return false
        }
        if let mark = stallMark, mark.sent == bodyBytesSent {
            return now &- mark.since >= timeout
        }
        stallMark = (bodyBytesSent, now)
        return false
    }
}
