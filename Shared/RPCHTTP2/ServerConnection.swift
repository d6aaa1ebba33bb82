internal import Foundation
internal import Logging
internal import RPC
internal import Synchronization
internal import SystemCalls
internal import Telemetry

/// One accepted HTTP/2 connection: its socket, its nghttp2 session and its streams. Lives on
/// one event loop; everything but ``scheduleFlush(_:)`` runs on that loop's thread.
final class ServerConnection: EventHandler, HTTP2SessionDelegate, SocketOwner, ServedConnection, @unchecked Sendable {
    // Invariant for @unchecked Sendable: only `pending` (a Mutex) is touched off the loop.
    private let socket: HTTP2Socket
    /// The loop holds the connection only while it is registered.
    let loop: EventLoop
    let peer: String
    let server: HTTP2ServerCore
    private var session: HTTP2Session!
    private var streams = StreamMap<ServerStream>()
    /// The `:path` of the latest request and its route: clients call the same few methods over
    /// and over, so a request for the same path reuses the string and skips the lookup.
    private var recentPath = ""
    private var recentRoute: RegisteredMethod?
    /// The call series of ``recentRoute`` (found with it, not looked up by path for every call).
    private var recentMetrics: MethodCallMetrics?
    /// Limits read on every call, copied out of the server's configuration once.
    private let maxHeaderListSize: Int
    private let maxMessageSize: Int
    private let inlineStartLimit: Int
    private let answerLimits: AnswerBufferLimits
    /// What this connection holds for its peer (``AnswerBufferLimits``): unsent answer bytes,
    /// added by handlers as they write (any thread) and taken off as the loop sends them, plus
    /// a charge per open stream. Relaxed: it is a bound checked at admission, not a sequence.
    private let heldBytes = Atomic<Int>(0)
    /// The connection's life cycle: open, draining, closed, and its housekeeping.
    private var lifecycle = ServerConnectionStateMachine(now: System.monotonicNanoseconds())
    private var housekeepingTimer: UInt64?
    private var headerBlocks: [String: HTTP2HeaderBlock] = [:]
    private let pending = Mutex<(streams: [ServerStream], scheduled: Bool)>(([], false))

    init(fd: Int32, peer: String, loop: EventLoop, server: HTTP2ServerCore) {
        self.socket = HTTP2Socket(fd: fd, loop: loop)
        self.loop = loop
        self.peer = peer
        self.server = server
        self.maxHeaderListSize = server.configuration.limits.maxHeaderListSize
        self.maxMessageSize = server.configuration.maxMessageSize
        self.inlineStartLimit = server.configuration.inlineStartLimit
        self.answerLimits = server.configuration.answerBuffer
    }

    /// Registers with the loop and sends our SETTINGS. Loop thread.
    func start() {
        loop.assertInLoop()
        session = HTTP2Session(limits: server.configuration.limits, serving: self)
        do {
            try loop.register(socket.fd, readable: true, writable: false, handler: self)
        } catch {
            server.logger.warning("cannot watch connection from \(peer): \(error)")
            close(reason: nil)  // and off the server's list, which shutdown waits on
            return
        }
        scheduleHousekeeping()
        flushOutput()
    }

    // MARK: Socket events

    func handleEvent(readable: Bool, writable: Bool, hangup: Bool) {

        loop.assertInLoop()
        if writable { flushOutput() }
        guard readable || hangup, !lifecycle.isClosed else { return }
        if case .closed(let reason) = socket.readAvailable(into: session) {
            close(reason: reason)
            return
        }
        flushSoon()
    }

    /// Flushes at the end of this loop iteration, once for everything queued in it. Loop only.
    private func flushSoon() {
        socket.flushSoon(self)
    }

    /// Writes everything nghttp2 has queued; closes when the session is done.
    func flushOutput() {
        loop.assertInLoop()
        guard !lifecycle.isClosed else { return }
        if let failure = socket.flush(session) {
            close(reason: failure)
        } else if !session.isAlive {
            close(reason: nil)
        }
    }

    // MARK: Handler-side requests

    /// Asks the loop to push a stream's new output (or grant its window). Any thread. On the
    /// loop itself (an immediate handler's answer, a callback answered from an upstream
    /// connection of the same loop, a handler that stays on the loop) the output is pushed at
    /// once, without a queued task; the socket write still waits for the end of the iteration.
    func scheduleFlush(_ stream: ServerStream) {
        if loop.inEventLoop {
            guard !lifecycle.isClosed else { return }
            push(stream)
            return flushSoon()
        }
        let schedule = pending.withLock { state -> Bool in
            state.streams.append(stream)
            defer { state.scheduled = true }
            return !state.scheduled
        }
        if schedule { loop.execute { self.processPending() } }
    }

    private func processPending() {

        loop.assertInLoop()
        let ready = pending.withLock { state -> [ServerStream] in
            state.scheduled = false
            defer { state.streams.removeAll(keepingCapacity: true) }
            return state.streams
        }
        guard !lifecycle.isClosed else { return }
        for stream in ready { push(stream) }
        flushSoon()
    }

    /// Hands a stream's new output to nghttp2 and grants the window its handler has freed.
    private func push(_ stream: ServerStream) {
        switch stream.lifecycle.pushAction {
        case .none: return
        case .resumeBody: session.resumeBody(streamID: stream.id)
        case .submitResponse: submitResponse(stream)
        }
        if stream.ungranted > 0 && stream.canGrantWindow {
            session.consume(streamID: stream.id, count: stream.ungranted)
            stream.ungranted = 0
        }
    }

    /// Submits a call's response headers once its answer has begun: finished, or a message
    /// written.
    private func submitResponse(_ stream: ServerStream) {
        if stream.isWeb { return submitWebResponse(stream) }
        // The error trailers are built only for a Trailers-Only answer (finished, nothing written).
        let (finished, wrote, trailers) = stream.shared.withLock { state in
            (state.finished, state.buffers.everWrote, state.finished && !state.buffers.everWrote ? state.errorTrailers : [])
        }
        guard finished || wrote else { return }
        if finished && !wrote {
            // Trailers-Only: one HEADERS frame carries the status and ends the stream.
            submit(HTTP2HeaderBlock([(":status", "200"), ("content-type", stream.contentType)] + trailers), body: false, on: stream)
        } else {
            submit(responseHeaders(for: stream.contentType), body: true, on: stream)
        }
    }

    /// Submits a stream's response headers, which the stream holds for nghttp2 to read
    /// (``ServerStreamStateMachine/Response/submitted(holding:)``); with `body`, DATA follows.
    private func submit(_ headers: HTTP2HeaderBlock, body: Bool, on stream: ServerStream) {
        stream.lifecycle.responseSubmitted(holding: headers)
        session.submitResponse(streamID: stream.id, headers: headers, body: body)
    }

    /// Submits the head of an answer to a request that is not gRPC, once its handler gave it.
    private func submitWebResponse(_ stream: ServerStream) {
        let (head, bodyless) = stream.shared.withLock { state in
            (state.webHead, state.webEnded && !state.buffers.everWrote)
        }
        guard let head else { return }
        submit(HTTP2HeaderBlock(head), body: !bodyless, on: stream)
    }

    /// The response headers for a content type, built once per connection.
    private func responseHeaders(for contentType: String) -> HTTP2HeaderBlock {
        if let block = headerBlocks[contentType] { return block }
        let block = HTTP2HeaderBlock([(":status", "200"), ("content-type", contentType)])
        if headerBlocks.count < 8 { headerBlocks[contentType] = block }  // clients use one or two
        return block
    }

    // MARK: Held answers (AnswerBufferLimits)

    /// Counts `count` bytes a handler wrote for this connection's peer. Any thread.
    func holdAnswerBytes(_ count: Int) {
        heldBytes.add(count, ordering: .relaxed)
        server.heldAnswerBytes.add(count, ordering: .relaxed)
    }

    /// Takes `count` bytes off what this connection holds (sent, or dropped with their stream).
    /// Any thread.
    func releaseAnswerBytes(_ count: Int) {
        heldBytes.subtract(count, ordering: .relaxed)
        server.heldAnswerBytes.subtract(count, ordering: .relaxed)
    }

    /// What a stream counts for while some of its answer waits (``AnswerBufferLimits/streamCharge``).
    var streamCharge: Int { answerLimits.streamCharge }

    /// Releases what a stream that just left the table still held: its unsent bytes and its
    /// charge. Called once per stream, after it was ended (``ServerStream/abort(_:)``) or sent
    /// its last byte, so no later write can add to what it holds.
    private func releaseHeld(by stream: ServerStream) {
        let held = stream.shared.withLock { state -> Int in
            defer { state.charged = false }
            return state.buffers.unsent + (state.charged ? answerLimits.streamCharge : 0)
        }
        if held > 0 { releaseAnswerBytes(held) }
    }

    /// The refusal of a new call while this connection, or the whole server with this
    /// connection above its share, holds more than its bound; nil when the call may go on.
    ///
    /// A connection's share, while the server is over its bound, is the bound divided among the
    /// open connections, at most ``AnswerBufferLimits/fairShare`` and at least
    /// ``AnswerBufferLimits/minimumShare``: however many connections a flood opens, what they
    /// hold together stays within about twice the bound, and a connection that reads its
    /// answers — holding next to nothing — is never refused.
    private func answerBufferRefusal() -> RPCError? {
        server.answerBufferRefusal(heldByConnection: heldBytes.load(ordering: .relaxed))
    }

    // MARK: HTTP2SessionDelegate

    private func stream(_ id: Int32) -> ServerStream? {
        streams.unretained(id)?.takeUnretainedValue()
    }

    func sessionBeginHeaders(streamID: Int32) {
        guard stream(streamID) == nil else { return }  // trailers of a known stream
        let stream = ServerStream(id: streamID, connection: self, maxMessageSize: maxMessageSize)
        streams.insert(stream, for: streamID)
        server.openStreams.add(1, ordering: .relaxed)
        lifecycle.streamActivity(at: System.monotonicNanoseconds())
    }

    func sessionHeader(streamID: Int32, name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        // Unretained: storing a header closes nothing, so `streams` holds the stream throughout.
        // What skipping the retain buys: see ``StreamMap/unretained(_:)``.
        streams.unretained(streamID)?._withUnsafeGuaranteedRef { stream in
            guard stream.lifecycle.isReceivingHeaders else { return }
            stream.headerBytes += name.count + value.count + 32
            guard stream.headerBytes <= maxHeaderListSize else { return }
            // Known names are matched on bytes: most headers never become Strings.
            switch KnownHeader(name) {
            case .path:
                if KnownHeader.matches(value, recentPath) {
                    stream.path = recentPath
                } else {
                    stream.path = String(decoding: value, as: UTF8.self)
                    recentPath = stream.path
                    recentRoute = nil
                    recentMetrics = nil
                }
            case .method: stream.httpMethod = String(decoding: value, as: UTF8.self)
            case .contentType: stream.contentType = KnownHeader.contentType(value)
            case .timeout: stream.timeout = String(decoding: value, as: UTF8.self)
            case .encoding: stream.encoding = String(decoding: value, as: UTF8.self)
            case .ignored: break
            case .other:
                let name = String(decoding: name, as: UTF8.self)
                if Metadata.isCustom(name) { stream.metadata.add(name, String(decoding: value, as: UTF8.self)) }
            }
        }
    }

    func sessionHeadersComplete(streamID: Int32, endStream: Bool) {
        guard let stream = stream(streamID) else { return }
        if stream.lifecycle.headerBlockEnded() { admit(stream) }
        if endStream { endOfRequest(stream) }
    }

    func sessionData(streamID: Int32, bytes: UnsafeRawBufferPointer) {
        guard let stream = stream(streamID), stream.route != nil, stream.lifecycle.isReceivingBody else {
            session.consume(streamID: streamID, count: bytes.count)  // discarded: nothing to hold back for
            if let stream = stream(streamID), stream.isWeb, stream.lifecycle.isReceivingBody { receiveWebBody(stream, bytes) }
            return
        }
        stream.receivedBytes += bytes.count
        var delivered: Bool?  // after a message: whether the handler's inbox is below its mark
        do {
            try stream.deframer.process(bytes) { message in delivered = stream.deliver(message) }
        } catch {
            stream.route = nil  // ignore the rest of the request
            session.consume(streamID: streamID, count: bytes.count)
            fail(stream, MessageDeframer.requestError(error))
            return
        }
        let grant = delivered ?? stream.canGrantWindow
        if grant {
            session.consume(streamID: streamID, count: stream.ungranted + bytes.count)
            stream.ungranted = 0
        } else {
            stream.ungranted += bytes.count
        }
    }

    func sessionDataEndStream(streamID: Int32) {
        if let stream = stream(streamID) { endOfRequest(stream) }
    }

    func sessionStreamClosed(streamID: Int32, errorCode: UInt32) {
        guard let stream = streams.removeValue(forKey: streamID) else { return }
        server.openStreams.subtract(1, ordering: .relaxed)
        if stream.lifecycle.close() { loop.countOpenCalls(-1) }
        stream.ungranted = 0  // the connection's window had them back on arrival
        if let timer = stream.deadlineTimer { loop.cancelTimer(timer) }
        let (finished, answered) = stream.shared.withLock { ($0.finished, $0.status) }
        if !finished || errorCode != 0 {
            // The client reset the stream or the connection went away: stop the handler.
            stream.abort(Self.clientCancelled)
        }
        // Reset before the answer was all sent: by the server (it says why) or the client.
        let reset: RPCError? = errorCode != 0 ? (stream.lifecycle.resetReason ?? Self.clientCancelled) : nil
        logEnd(stream, status: reset ?? (finished ? answered : Self.clientCancelled), answered: answered)
        releaseHeld(by: stream)
        lifecycle.streamActivity(at: System.monotonicNanoseconds())
        // Not flushOutput(): this runs inside nghttp2's callback, which must not re-enter the session.
        if lifecycle.streamClosed(streamsLeft: streams.count) { flushSoon() }
    }

    /// The status of a call the client reset before its answer was all sent.
    private static let clientCancelled = RPCError(code: .cancelled, message: "The client cancelled the call.")

    /// Logs a call's one line as its stream ends, with what the client got (`status`: the
    /// answer's, or why the stream was reset before its answer was all sent) and the time until
    /// then; `answered` is the status the call ended with, kept beside a reset when it was a
    /// server failure (with its cause). Calls that failed before being routed were logged when
    /// answered (``fail(_:_:)``).
    private func logEnd(_ stream: ServerStream, status: RPCError?, answered: RPCError?) {
        if stream.isWeb {
            // A request of the WebHandler: its own line, and its count for graceful shutdown.
            stream.webResponse?.logLine(server: server, cancelled: !stream.shared.withLock { $0.webEnded })
            server.callEnded()
            return
        }
        guard stream.lifecycle.handlerStarted || stream.route != nil else { return }
        let requestID = stream.requestID ?? stream.metadata[MetadataKey.requestID].map(RequestID.init)
        let failure = answered.flatMap { $0.code == .internal || $0.code == .unknown ? $0 : nil }
        let handlerStatus = status?.code == failure?.code ? nil : failure
        server.logCall(
            stream: stream, status: status, requestID: requestID, cause: status?.cause ?? failure?.cause,
            handlerStatus: handlerStatus)
    }

    func sessionAnswerHeadersNotSent(streamID: Int32) {
        stream(streamID)?.lifecycle.answerHeadersNotSent()
    }

    func sessionSentRequestHeaders(streamID: Int32) {}  // a server sends no requests

    func sessionSentEndStream(streamID: Int32) {
        // Our response is complete; a client still sending is told to stop without error
        // (RFC 9113 §8.1).
        if let stream = stream(streamID), stream.lifecycle.responseEnded() {
            session.reset(streamID: streamID, errorCode: 0)
        }
    }

    func sessionReadBody(streamID: Int32, into buffer: UnsafeMutableRawBufferPointer) -> HTTP2BodyRead {
        guard let stream = stream(streamID) else { return .bytes(count: 0, end: true, trailers: nil) }
        return stream.readBody(into: buffer)
    }

    func sessionGoAway(lastStreamID: Int32, errorCode: UInt32) {}

    func sessionPingAcknowledged() { lifecycle.pingAcknowledged() }

    func sessionSettingsReceived() {}

    // MARK: Admission and handler start

    /// Validates request headers and routes the call, or answers it at once.
    private func admit(_ stream: ServerStream) {
        if let web = server.web,
            stream.httpMethod != "POST" || !KnownHeader.isGRPC(contentType: stream.contentType)
                || KnownHeader.isGRPCWeb(contentType: stream.contentType),
            web.serves(path: Self.pathWithoutQuery(stream.path))
        {
            return admitWeb(stream)
        }
        if stream.headerBytes > maxHeaderListSize {
            stream.contentType = "application/grpc+json"
            return fail(stream, RPCError(code: .resourceExhausted, reason: "HEADER_LIST_TOO_LARGE", message: "The request headers exceed \(maxHeaderListSize) bytes."))
        }
        guard stream.httpMethod == "POST" else {
            return answerHTTP(stream, status: 405)
        }
        guard KnownHeader.isGRPC(contentType: stream.contentType) else {
            return answerHTTP(stream, status: 415)
        }
        if let busy = answerBufferRefusal() { return fail(stream, busy) }
        if let encoding = stream.encoding, encoding != "identity" {
            return fail(stream, .unsupportedEncoding(encoding))
        }
        let isRecent = stream.path == recentPath
        guard let route = (isRecent ? recentRoute : nil) ?? server.router.method(forPath: stream.path) else {
            return fail(stream, .unknownMethod(stream.path))
        }
        if isRecent { recentRoute = route }
        stream.chargeOnAdmission()
        switch KnownHeader.codec(ofGRPC: stream.contentType) {
        case .json: break
        case .protobuf where route.speaksProtobuf: break
        case .protobuf, .other:
            return fail(stream, RPCError(
                code: .unimplemented, reason: "UNSUPPORTED_CODEC",
                message: "'\(ClientInput.quoted(stream.contentType))' is not supported here; send JSON as application/grpc+json."))
        }
        stream.route = route
        if let callMetrics = server.callMetrics {
            let metrics = (isRecent ? recentMetrics : nil) ?? callMetrics.method(path: route.info.path)
            if isRecent { recentMetrics = metrics }
            metrics.start()
            stream.methodMetrics = metrics
        }
        var timeLeft = route.info.kind == .unary ? server.configuration.defaultUnaryTimeout : nil
        if let timeout = stream.timeout {
            guard let duration = GRPCTimeout.parse(timeout) else {
                stream.route = nil
                return fail(stream, .malformedTimeout(timeout))
            }
            timeLeft = duration
        }
        if let timeLeft {
            stream.deadline = stream.startTime + timeLeft
            // The stream is the timer's target (``ServerStream/loopTimerFired()``): no closure
            // per call. The timer holds it strongly until it fires or is cancelled, which
            // happens when the stream or the connection closes.
            stream.deadlineTimer = loop.scheduleTimer(after: timeLeft, target: stream)
        }
        if !route.info.kind.isUnaryRequest { startHandler(stream) }
    }

    // MARK: Requests that are not gRPC (the WebHandler)

    /// Starts gathering a request for the ``WebHandler`` (a server that has one): its body is
    /// taken whole, within the message size limit, before the handler sees it.
    private func admitWeb(_ stream: ServerStream) {
        stream.webBody = Data()
        stream.shared.withLock { $0.buffers.raw = true }
        stream.lifecycle.handlerStarts(countedOpen: false)
        server.callStarted()
        let response = HTTP2WebResponse(stream: stream, method: stream.httpMethod, path: stream.path, peer: peer)
        if stream.headerBytes > maxHeaderListSize {
            stream.webResponse = response
            return response.send(status: 431, headers: HTTP1Response.plainText, body: Data("The request's header fields are larger than \(maxHeaderListSize) bytes.\n".utf8))
        }
        if let busy = answerBufferRefusal() {
            stream.webResponse = response
            response.noteCall(path: Self.pathWithoutQuery(stream.path), status: busy, requestID: nil)
            var headers = HTTP1Response.plainText
            headers.add("retry-after", "1")
            return response.send(status: 503, headers: headers, body: Data((busy.message + "\n").utf8))
        }
    }

    private func receiveWebBody(_ stream: ServerStream, _ bytes: UnsafeRawBufferPointer) {
        guard stream.webResponse == nil else { return }  // answered already (refused)
        guard stream.webBody!.count + bytes.count <= maxMessageSize else {
            let response = HTTP2WebResponse(stream: stream, method: stream.httpMethod, path: stream.path, peer: peer)
            stream.webResponse = response
            stream.webBody = Data()
            return response.send(status: 413, headers: HTTP1Response.plainText, body: Data("The request body is larger than \(maxMessageSize) bytes.\n".utf8))
        }
        stream.webBody!.append(bytes.assumingMemoryBound(to: UInt8.self))
    }

    /// Hands a request whose body has all arrived to the ``WebHandler``.
    private func dispatchWeb(_ stream: ServerStream) {
        guard let web = server.web else { return }
        let response = HTTP2WebResponse(stream: stream, method: stream.httpMethod, path: stream.path, peer: peer)
        stream.webResponse = response
        var headers = WebHeaders()
        if !stream.contentType.isEmpty { headers.add("content-type", stream.contentType) }
        if let timeout = stream.timeout { headers.add("grpc-timeout", timeout) }
        for entry in stream.metadata { headers.add(entry.name, entry.value) }
        let (path, query) = HTTP1Connection.splitTarget(stream.path)
        let request = WebRequest(
            method: stream.httpMethod, path: path, query: query, headers: headers, body: stream.webBody ?? Data(), peer: peer,
            version: "HTTP/2", arrival: stream.startTime)
        stream.webBody = Data()  // let go of the body; non-nil still marks the stream as web
        web.serve(request, response: response)
    }

    /// Runs `action` at `deadline` unless the web answer on `stream` has ended, on the stream's
    /// deadline timer (cancelled with the stream, as a call's). Any thread.
    func scheduleWebDeadline(_ stream: ServerStream, at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) {
        guard loop.inEventLoop else {
            return loop.execute { self.scheduleWebDeadline(stream, at: deadline, action) }
        }
        guard !lifecycle.isClosed, !stream.lifecycle.isClosed else { return }
        if let timer = stream.deadlineTimer { loop.cancelTimer(timer) }
        stream.deadlineTimer = loop.scheduleTimer(after: max(.zero, deadline - .now)) { [weak stream] in
            guard let stream else { return }
            stream.deadlineTimer = nil
            if !stream.shared.withLock({ $0.webEnded }) { action() }
        }
    }

    static func pathWithoutQuery(_ path: String) -> String {
        path.firstIndex(of: "?").map { String(path[..<$0]) } ?? path
    }

    /// A call's deadline passed: it ends `DEADLINE_EXCEEDED` and its handler is cancelled. A
    /// stream whose response is still waiting to go out — the peer keeps its window shut — is
    /// reset as well: the caller has given up by now, and the stream would otherwise hold its
    /// slot and its unsent response for as long as the connection lives (a client that never
    /// reads could pile them up by the thousand).
    func deadlinePassed(_ stream: ServerStream) {
        loop.assertInLoop()
        stream.deadlineTimer = nil
        let passed = RPCError(code: .deadlineExceeded, message: "The deadline passed.")
        stream.abort(passed)
        flushOutput()
        guard !lifecycle.isClosed, !stream.lifecycle.isClosed, stream.shared.withLock({ $0.buffers.unsent > 0 }) else { return }
        resetAnswer(stream, because: passed)
        flushOutput()
    }

    /// Resets a stream whose answer will not all go out (RST_STREAM CANCEL), noting `reason` for
    /// its log line (``ServerStreamStateMachine/resetReason``).
    private func resetAnswer(_ stream: ServerStream, because reason: RPCError) {
        stream.lifecycle.serverResets(because: reason)
        session.reset(streamID: stream.id, errorCode: 8)  // CANCEL
    }

    private func endOfRequest(_ stream: ServerStream) {
        guard stream.lifecycle.requestEnded() else { return }
        if stream.isWeb, stream.webResponse == nil { return dispatchWeb(stream) }
        guard stream.route != nil else { return }
        if stream.deframer.hasPartialMessage {
            stream.route = nil
            return fail(stream, MessageDeframer.truncatedRequest)
        }
        stream.endInbound()
        if !stream.lifecycle.handlerStarted { startHandler(stream) }
    }

    /// Ends a call with an error before or during its handler.
    private func fail(_ stream: ServerStream, _ error: RPCError) {
        if !KnownHeader.isGRPC(contentType: stream.contentType) {
            stream.contentType = "application/grpc+json"
        }
        stream.abort(error)
        if !stream.lifecycle.handlerStarted {
            server.logCall(stream: stream, status: error, requestID: stream.metadata[MetadataKey.requestID].map(RequestID.init))
        }
    }

    private func answerHTTP(_ stream: ServerStream, status: Int) {
        stream.shared.withLock { $0.finished = true }
        submit(HTTP2HeaderBlock([(":status", String(status))]), body: false, on: stream)
        server.logCall(
            stream: stream, status: RPCError(code: .forHTTPStatus(status), message: "HTTP status \(status)."), requestID: stream.metadata[MetadataKey.requestID].map(RequestID.init),
            httpStatus: status)
    }

    private func startHandler(_ stream: ServerStream) {
        guard let route = stream.route else { return }
        // Unary calls only: a stream (a watch) may stay open for hours with nothing to do.
        let countedOpen = route.info.kind == .unary
        stream.lifecycle.handlerStarts(countedOpen: countedOpen)
        if countedOpen { loop.countOpenCalls(1) }
        let requestID = stream.metadata[MetadataKey.requestID].map(RequestID.init) ?? RequestID.next()
        stream.requestID = requestID
        let context = ServerContext(
            method: route.info, metadata: stream.metadata, deadline: stream.deadline, requestID: requestID, peer: peer,
            contentType: stream.contentType, logger: server.logger, arrival: stream.startTime)
        stream.trace = context.trace
        let server = self.server
        // A small unary request that has fully arrived starts right here, on the loop thread:
        // with no task at all when its handler never suspends (or answers through a callback)
        // and its interceptors need not suspend either, else in a task that runs until its
        // first suspension (most such handlers finish without one), so the call costs no
        // thread hand-off. Anything else starts on the cooperative pool, or on the loop when
        // handlers stay there.
        let inline = route.info.kind.isUnaryRequest && stream.lifecycle.isRequestEnded
            && stream.receivedBytes <= inlineStartLimit
        if inline, route.immediateHandler != nil || route.callbackHandler != nil,
            route.interceptors.canPrepareImmediately
        {
            return serveWithoutTask(stream, route: route, context: context)
        }
        server.callStarted()
        let body: @concurrent @Sendable () async -> Void = {
            var context = context
            var status: RPCError?
            do {
                try await route.interceptors.prepare(&context)
                try await route.handler(stream, context)
            } catch {
                status = RPCError(converting: error)
            }
            stream.finish(status)  // logged when the stream ends (``logEnd(_:status:answered:)``)
            server.callEnded()
        }
        // Without an executor preference the task is created without one: even a nil
        // preference costs a record per task and a check at every resumption.
        let task: Task<Void, Never> =
            switch (inline, server.configuration.handlersStayOnLoop) {
            case (true, true): Task.immediate(executorPreference: loop, operation: body)
            case (true, false): Task.immediate(operation: body)
            case (false, true): Task(executorPreference: loop, operation: body)
            case (false, false): Task(operation: body)
            }
        let cancelled = stream.shared.withLock { state -> Bool in
            state.task = task
            return state.buffers.cancellation != nil
        }
        if cancelled { task.cancel() }
        // An answer (or the next request) usually comes within microseconds: poll, don't sleep
        // (unless many calls are open, see ``EventLoop/expectWorkSoon()``).
        loop.expectWorkSoon()
    }

    /// Serves a call whose handler never suspends, or answers through a callback, starting
    /// here on the loop thread, with no task.
    private func serveWithoutTask(_ stream: ServerStream, route: RegisteredMethod, context: ServerContext) {
        var context = context
        let request: Data
        do {
            try route.interceptors.prepareImmediately(&context)
            request = try stream.takeSingleRequestNow()
        } catch {
            return answer(stream, with: .failure(error))
        }
        if let immediate = route.immediateHandler {
            answer(stream, with: Result { try immediate(request, context) })
            // The caller's next request usually follows within microseconds: poll, don't sleep,
            // unless many calls are open (``EventLoop/expectWorkSoon()``): at one call at a time
            // a sleeping loop's wake-up is much of the round trip (`Benchmarks/run`'s 1x1 shape;
            // Benchmarks/HISTORY.md, 2026-11-23, 715eb8a).
            loop.expectWorkSoon()
        } else if let callback = route.callbackHandler {
            server.callStarted()
            // The stream receives the answer (``ServerStream/receiveAnswer(_:)``) from any thread.
            callback(request, context, stream.attachResponder())
        }
        // No polling after starting a callback: its answer arrives through a socket, and the
        // gateway (its user) shares cores with the services it calls.
    }

    /// Ends a call served without a task with the handler's answer (logged when the stream
    /// ends); any thread.
    func answer(_ stream: ServerStream, with result: Result<Data, any Error>) {
        var status: RPCError?
        do {
            try stream.writeNow(try result.get())
        } catch {
            status = RPCError(converting: error)
        }
        stream.finish(status)
    }

    /// A callback handler's call has ended (counted for graceful shutdown); any thread.
    func callbackEnded() {
        server.callEnded()
    }

    // MARK: Life cycle

    /// Starts a graceful shutdown: the GOAWAY notice now, the final GOAWAY a moment later.
    func beginDrain() {
        loop.assertInLoop()
        guard lifecycle.beginDrain() else { return }
        session.submitShutdownNotice()
        flushOutput()
        loop.scheduleTimer(after: .milliseconds(100)) { [self] in
            guard !lifecycle.isClosed else { return }
            session.submitGoAway()
            flushOutput()
        }
    }

    /// Closes at once, cancelling every call still running.
    func close(reason: String?) {
        loop.assertInLoop()
        guard lifecycle.close() else { return }
        if let reason { server.logger.debug("connection from \(peer) closed: \(reason)") }
        if let timer = housekeepingTimer { loop.cancelTimer(timer) }
        socket.close()
        for stream in streams.allValues {
            if stream.lifecycle.close() { loop.countOpenCalls(-1) }
            if let timer = stream.deadlineTimer { loop.cancelTimer(timer) }
            let closedUnder = RPCError(code: .cancelled, message: "The connection closed.")
            let answered = stream.shared.withLock { $0.status }
            stream.abort(closedUnder)
            logEnd(stream, status: closedUnder, answered: answered)
            releaseHeld(by: stream)
        }
        server.openStreams.subtract(streams.count, ordering: .relaxed)
        streams.removeAll()
        server.connectionClosed(self)
    }

    private func scheduleHousekeeping() {
        let configuration = server.configuration
        // At least 10 ms: a zero setting must not turn housekeeping into a busy loop.
        let interval = max(.milliseconds(10), min(configuration.keepaliveInterval, configuration.idleTimeout, configuration.sendTimeout / 4))
        // Cancelled in close(); a strong capture keeps refcounting on the fast path (see above).
        housekeepingTimer = loop.scheduleTimer(after: interval) { [self] in
            housekeeping()
        }
    }

    /// Closes idle connections, pings quiet ones (a ping unanswered for a whole interval means
    /// the peer is gone), and gives up on answers the peer does not take
    /// (``ServerConfiguration/sendTimeout``).
    private func housekeeping() {
        loop.assertInLoop()
        let configuration = server.configuration
        let now = System.monotonicNanoseconds()
        let timeouts = ServerConnectionStateMachine.Timeouts(
            idle: configuration.idleTimeout.clockNanoseconds, keepalive: configuration.keepaliveInterval.clockNanoseconds,
            send: configuration.sendTimeout.clockNanoseconds)
        let ping: Bool
        switch lifecycle.housekeeping(
            now: now, streamsOpen: !streams.isEmpty, lastRead: socket.lastActivity,
            outputStalledSince: socket.outputStalledSince, timeouts: timeouts)
        {
        case .none:
            return
        case .closeIdle:
            session.submitGoAway()
            flushOutput()
            return close(reason: "idle")
        case .closeUnanswered:
            return close(reason: "keepalive ping unanswered")
        case .closeSendTimeout:
            server.logger.info("closing the connection from \(peer): it took no data for \(configuration.sendTimeout)")
            return close(reason: "send timeout")
        case .carryOn(let pingNow):
            ping = pingNow
        }
        let sendTimeout = timeouts.send
        let stalled = streams.allValues.filter {
            $0.sendStalled(now: now, for: sendTimeout, windowShut: session.sendWindow(streamID: $0.id) <= 0)
        }
        if !stalled.isEmpty {
            // Info, as the call lines are: a client that never reads can cause one per connection.
            server.logger.info(
                "resetting \(stalled.count) stream(s) from \(peer) whose answers waited \(configuration.sendTimeout) on a shut window")
        }
        for stream in stalled {
            let untaken = RPCError(code: .cancelled, message: "The client took none of the answer.")
            stream.abort(untaken)
            resetAnswer(stream, because: untaken)
        }
        if ping { session.submitPing() }
        flushOutput()
        if !lifecycle.isClosed { scheduleHousekeeping() }
    }
}
