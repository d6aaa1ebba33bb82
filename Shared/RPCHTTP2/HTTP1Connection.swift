internal import Foundation
internal import Logging
internal import RPC
internal import Synchronization
internal import SystemCalls

/// One accepted HTTP/1.x connection (the web edge, API.md §9): requests parsed one at a time
/// (``HTTP1Parser``), handed whole to the server's ``WebHandler``, answered in order.
///
/// Lives on one event loop; only ``enqueue(_:final:)`` and the writer's wait run elsewhere,
/// through `pending`. While a request is being answered the next one is not parsed: its bytes
/// wait in the inbox (a pipelining client's), up to ``inboxLimit``, after which the socket is
/// not read until the answer is out — so a client cannot make the server hold more than one
/// request and one answer's worth of its bytes, and answers leave in the order asked.
final class HTTP1Connection: EventHandler, ServedConnection, @unchecked Sendable {
    // Invariant for @unchecked Sendable: only `pending` (a Mutex) is touched off the loop.
    let fd: Int32
    let loop: EventLoop
    let peer: String
    let server: HTTP2ServerCore
    private let web: any WebHandler
    private let parser: HTTP1Parser
    private let timeouts: HTTP1Timeouts

    /// Received bytes, parsed up to `inboxStart`: taken from the front by moving an offset, so
    /// a batch of pipelined requests is not shifted once per request.
    private var inbox: [UInt8] = []
    private var inboxStart = 0
    /// Whether the head of the request at the inbox's start passed ``HTTP1HeadScanner``, and
    /// how far a scan of it got.
    private var headScanned = false
    private var headScan = HTTP1HeadScanner.Progress()
    /// The head of a request whose chunked body is being read, and that body.
    private var chunkedHead: HTTP1RequestHead?
    private var chunkedBody: HTTP1ChunkedBody?
    /// Whether ``processInbox()`` is running: an answer given at once (on this thread) ends
    /// inside it and asks for the next request, which the running loop takes instead of a
    /// nested call — a pipelined batch must not nest one call per request.
    private var processing = false
    /// Bytes for the socket, in order.
    private var output = ConnectionOutput()
    private var watchingWritable = false
    private var readingPaused = false
    private var closed = false
    /// Set when the connection is to close once the answer in progress is out: the client
    /// asked (`connection: close`, HTTP/1.0), a request was refused, the server drains.
    private var closeAfterAnswer = false
    /// Set when the peer has closed its side: nothing more will arrive.
    private var peerClosed = false
    /// The request being answered.
    private var current: HTTP1Response?
    /// When (monotonic ns) the request now arriving sent its first byte; nil between requests.
    private var requestBegan: UInt64?
    /// When (monotonic ns) the last answer ended, or the connection opened: for the idle limit.
    private var idleSince = System.monotonicNanoseconds()
    /// Since when output has waited for the peer to read with none of it taken.
    private var outputStalledSince: UInt64?
    private var housekeepingTimer: UInt64?
    /// The deadline timer of the answer in progress (``WebResponse/setDeadline(_:_:)``).
    private var deadlineTimer: UInt64?
    /// What answers hand the loop, from any thread.
    let pending = Mutex(Pending())

    struct Pending {
        var chunks: [Data] = []
        /// Bytes of the current answer not yet written to the socket (queued here or in
        /// `output`): what the writer waits on and the answer-buffer bound counts.
        var unsent = 0
        /// Whether the loop has been asked to take the chunks.
        var scheduled = false
        /// The answer's last bytes are among the chunks.
        var final = false
        /// A streaming writer waiting for `unsent` to fall below the low mark.
        var writer: CheckedContinuation<Void, any Error>?
        var cancelled = false
    }

    /// Unparsed bytes a pipelining client may have waiting while an answer is in progress.
    static let inboxLimit = 64 * 1024
    /// Unsent answer bytes above which a streaming writer waits…
    static let outboundHighWater = 256 * 1024
    /// …until they drop below this.
    static let outboundLowWater = 64 * 1024

    init(fd: Int32, peer: String, loop: EventLoop, server: HTTP2ServerCore, web: any WebHandler) {
        self.fd = fd
        self.peer = peer
        self.loop = loop
        self.server = server
        self.web = web
        self.timeouts = server.configuration.http1
        self.parser = HTTP1Parser(limits: HTTP1RequestLimits(
            maxHeaderList: server.configuration.limits.maxHeaderListSize, maxBody: server.configuration.maxMessageSize))
    }

    /// Registers with the loop. Loop thread.
    func start() {
        do {
            try loop.register(fd, readable: true, writable: false, handler: self)
        } catch {
            server.logger.warning("cannot watch connection from \(peer): \(error)")
            close(reason: nil)
            return
        }
        scheduleHousekeeping()
    }

    // MARK: Reading

    func handleEvent(readable: Bool, writable: Bool, hangup: Bool) {
        if writable { flushOutput() }
        guard readable || hangup, !closed, !readingPaused else { return }
        readAvailable()
        guard !closed else { return }
        processInbox()
        flushSoon()
    }

    private func readAvailable() {
        var budget = 1 << 20
        while budget > 0 && !peerClosed {
            if (current != nil || pending.withLock({ $0.unsent }) > Self.outboundHighWater) && unparsed >= Self.inboxLimit {
                pauseReading(true)
                return
            }
            let count: Int?
            do {
                count = try loop.readBuffer.withUnsafeMutableBytes { try Socket.read(fd, into: $0) }
            } catch {
                close(reason: "read failed: \(error)")
                return
            }
            guard let count else { return }
            if count == 0 {
                // The client closed (or half-closed: TCP cannot tell them apart). As nginx does,
                // take it as the client giving up: an answer in progress — a watch that would
                // otherwise stream into a closed socket until a write fails — is cancelled.
                peerClosed = true
                close(reason: current == nil ? nil : "client closed before its answer")
                return
            }
            if requestBegan == nil && current == nil { requestBegan = System.monotonicNanoseconds() }
            inbox.append(contentsOf: loop.readBuffer[0..<count])
            budget -= count
            if count < loop.readBuffer.count { return }
        }
    }

    private func pauseReading(_ paused: Bool) {
        guard paused != readingPaused, !closed else { return }
        readingPaused = paused
        loop.modify(fd, readable: !paused, writable: watchingWritable)
    }

    /// Unparsed bytes waiting.
    private var unparsed: Int { inbox.count - inboxStart }

    /// Parses and dispatches requests while none is being answered and the answers already
    /// queued are being read (a client that pipelines and never reads gets no more parsed).
    private func processInbox() {
        guard !processing else { return }
        processing = true
        defer {
            processing = false
            compactInbox()
        }
        while current == nil && !closed && !closeAfterAnswer && unparsed > 0 {
            guard pending.withLock({ $0.unsent }) <= Self.outboundHighWater else { return }  // sent() resumes
            if let head = chunkedHead {
                let (consumed, outcome) = inbox.withUnsafeBytes {
                    chunkedBody!.feed(UnsafeRawBufferPointer(rebasing: $0[inboxStart...]))
                }
                inboxStart += consumed
                switch outcome {
                case .needMore: return
                case .failed(let status, let message): return refuse(status: status, message: message)
                case .complete:
                    let body = chunkedBody!.body
                    chunkedHead = nil
                    chunkedBody = nil
                    requestBegan = unparsed == 0 ? nil : System.monotonicNanoseconds()
                    dispatch(head, body: body)
                    continue
                }
            }
            if !headScanned {
                let outcome = inbox.withUnsafeBytes {
                    HTTP1HeadScanner.scan(
                        UnsafeRawBufferPointer(rebasing: $0[inboxStart...]),
                        limit: parser.limits.maxHeaderList + parser.limits.maxTarget + 1024,
                        lineLimit: parser.limits.maxTarget + 64, progress: &headScan)
                }
                switch outcome {
                case .incomplete: return
                case .invalid(let status, let message): return refuse(status: status, message: message)
                case .complete:
                    headScanned = true
                    headScan = HTTP1HeadScanner.Progress()
                }
            }
            let (consumed, event) = inbox.withUnsafeBytes { parser.parse(UnsafeRawBufferPointer(rebasing: $0[inboxStart...])) }
            inboxStart += consumed
            if parser.takeContinueWanted() { enqueue(Self.continueLine, final: false) }
            switch event {
            case .needMore: return
            case .failed(let status, let message): return refuse(status: status, message: message)
            case .complete(let head, let body):
                headScanned = false
                if head.chunked {
                    chunkedHead = head
                    chunkedBody = HTTP1ChunkedBody(maxBody: parser.limits.maxBody, maxTrailers: parser.limits.maxHeaderList)
                    continue
                }
                requestBegan = unparsed == 0 ? nil : System.monotonicNanoseconds()
                dispatch(head, body: body)
            }
        }
    }

    /// Drops the parsed bytes from the inbox's front once they are most of it.
    private func compactInbox() {
        if inboxStart == inbox.count {
            inbox.removeAll(keepingCapacity: inbox.count <= 64 * 1024)
            inboxStart = 0
        } else if inboxStart >= 16 * 1024 && inboxStart * 2 >= inbox.count {
            inbox.removeFirst(inboxStart)
            inboxStart = 0
        }
    }

    private static let continueLine = Data("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// Answers a request that cannot be served (or read to its end) and closes after it.
    private func refuse(status: Int, message: String) {
        inbox.removeAll()
        inboxStart = 0
        closeAfterAnswer = true
        let response = HTTP1Response(
            connection: self, method: "GET", version: (1, 1), keepAlive: false, path: "-", arrival: .now)
        current = response
        server.callStarted()
        response.send(status: status, headers: HTTP1Response.plainText, body: Data((message + "\n").utf8))
    }

    private func dispatch(_ head: HTTP1RequestHead, body: Data) {
        let keepAlive = head.keepAlive && !head.upgrade && !peerClosed
        if !keepAlive { closeAfterAnswer = true }
        let (path, query) = Self.splitTarget(head.target)
        let response = HTTP1Response(
            connection: self, method: head.method, version: (head.major, head.minor), keepAlive: keepAlive, path: path,
            arrival: .now)
        current = response
        server.callStarted()
        if let busy = server.answerBufferRefusal(heldByConnection: pending.withLock { $0.unsent }) {
            response.noteCall(path: path, status: busy, requestID: nil)
            var headers = HTTP1Response.plainText
            headers.add("retry-after", "1")
            return response.send(status: 503, headers: headers, body: Data((busy.message + "\n").utf8))
        }
        let request = WebRequest(
            method: head.method, path: path, query: query, headers: WebHeaders(head.headers.map { ($0.name, $0.value) }),
            body: body, peer: peer, version: head.version, arrival: response.arrival)
        web.serve(request, response: response)
    }

    /// The path and query of a request target: origin form (`/a?b`), or absolute form
    /// (`http://host/a?b`, which a proxy sends); `*` and anything else is its own path.
    static func splitTarget(_ target: String) -> (path: String, query: String?) {
        // On UTF-8 bytes: the marks are ASCII, and walking Characters costs more than the rest.
        var rest = Substring(target).utf8[...]
        if rest.first != UInt8(ascii: "/"), let scheme = Substring(rest).range(of: "://") {
            rest = Substring(rest)[scheme.upperBound...].utf8[...]
            rest = rest.firstIndex(of: UInt8(ascii: "/")).map { rest[$0...] } ?? "/".utf8[...]
        }
        if let fragment = rest.firstIndex(of: UInt8(ascii: "#")) { rest = rest[..<fragment] }
        guard let mark = rest.firstIndex(of: UInt8(ascii: "?")) else { return (String(Substring(rest)), nil) }
        return (String(Substring(rest[..<mark])), String(Substring(rest[rest.index(after: mark)...])))
    }

    // MARK: Writing (answers call in from any thread)

    /// Queues bytes of the current answer; `final` when they end it. Any thread.
    func enqueue(_ bytes: Data, final: Bool) {
        let schedule = pending.withLock { state -> Bool in
            guard !state.cancelled else { return false }
            state.chunks.append(bytes)
            state.unsent += bytes.count
            if final { state.final = true }
            defer { state.scheduled = true }
            return !state.scheduled
        }
        server.heldAnswerBytes.add(bytes.count, ordering: .relaxed)
        guard schedule else { return }
        if loop.inEventLoop {
            takePending()
        } else {
            loop.execute { self.takePending() }
        }
    }

    /// Waits while more than the high mark of the answer is unsent. Any thread.
    func waitUntilDrained() async throws {
        let mustWait = pending.withLock { $0.unsent > Self.outboundHighWater }
        guard mustWait else {
            if pending.withLock({ $0.cancelled }) { throw CancellationError() }
            return
        }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let resume = pending.withLock { state -> Result<Void, any Error>? in
                if state.cancelled { return .failure(CancellationError()) }
                if state.unsent <= Self.outboundLowWater { return .success(()) }
                state.writer = continuation
                return nil
            }
            if let resume { continuation.resume(with: resume) }
        }
    }

    /// Moves what answers queued into the output and, when the answer ended, goes on with the
    /// next request. Loop only.
    private func takePending() {
        let (chunks, final) = pending.withLock { state -> ([Data], Bool) in
            state.scheduled = false
            defer {
                state.chunks.removeAll(keepingCapacity: true)
                state.final = false
            }
            return (state.chunks, state.final)
        }
        guard !closed else { return }
        for chunk in chunks { chunk.withUnsafeBytes { output.append($0) } }
        if final { answerEnded() }
        flushSoon()
    }

    /// Runs `action` at `deadline` unless `response`'s answer has ended by then. Any thread.
    func scheduleDeadline(for response: HTTP1Response, at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) {
        guard loop.inEventLoop else {
            return loop.execute { self.scheduleDeadline(for: response, at: deadline, action) }
        }
        guard !closed, current === response else { return }
        if let timer = deadlineTimer { loop.cancelTimer(timer) }
        deadlineTimer = loop.scheduleTimer(after: max(.zero, deadline - .now)) { [self] in
            deadlineTimer = nil
            if current === response { action() }
        }
    }

    private func answerEnded() {
        guard let response = current else { return }
        current = nil
        if let timer = deadlineTimer {
            loop.cancelTimer(timer)
            deadlineTimer = nil
        }
        response.logLine(server: server)
        server.callEnded()
        idleSince = System.monotonicNanoseconds()
        if closeAfterAnswer || peerClosed { return }  // closed once the output is out
        processInbox()
        if current == nil && readingPaused { pauseReading(false) }
    }

    private var flushQueued = false

    private func flushSoon() {
        guard !flushQueued else { return }
        flushQueued = true
        loop.atEndOfIteration { [self] in
            flushQueued = false
            flushOutput()
        }
    }

    /// Writes the output as far as the socket takes it; closes once the last answer is out
    /// when the connection is to close.
    func flushOutput() {
        guard !closed else { return }
        var written = 0
        do {
            let before = output.count
            let wroteAll = try output.write(to: fd)
            written = before - output.count
            if !wroteAll {
                if outputStalledSince == nil || written > 0 { outputStalledSince = System.monotonicNanoseconds() }
                watchWritable(true)
            } else {
                outputStalledSince = nil
                watchWritable(false)
            }
        } catch {
            close(reason: "write failed: \(error)")
            return
        }
        if written > 0 { sent(written) }
        if output.isEmpty && current == nil && (closeAfterAnswer || peerClosed) {
            close(reason: nil)
        }
    }

    /// Counts `count` answer bytes as sent; resumes a writer below the low mark.
    private func sent(_ count: Int) {
        server.heldAnswerBytes.subtract(count, ordering: .relaxed)
        let writer = pending.withLock { state -> CheckedContinuation<Void, any Error>? in
            state.unsent -= count
            guard state.unsent <= Self.outboundLowWater, let writer = state.writer else { return nil }
            state.writer = nil
            return writer
        }
        writer?.resume()
        // Pipelined requests wait while their answers are not read (processInbox); go on with
        // them once the answers are out.
        if current == nil && unparsed > 0 && !processing && pending.withLock({ $0.unsent }) <= Self.outboundLowWater {
            processInbox()
            if current == nil && readingPaused && !closed { pauseReading(false) }
        }
    }

    private func watchWritable(_ writable: Bool) {
        guard writable != watchingWritable else { return }
        watchingWritable = writable
        loop.modify(fd, readable: !readingPaused, writable: writable)
    }

    // MARK: Life cycle

    /// Closes once the answer in progress is out (at once when none is).
    func beginDrain() {
        guard !closed else { return }
        closeAfterAnswer = true
        if current == nil && output.isEmpty { close(reason: "shutdown") }
    }

    /// Closes at once; an answer in progress is cancelled.
    func close(reason: String?) {
        guard !closed else { return }
        closed = true
        if let reason { server.logger.debug("HTTP/1.1 connection from \(peer) closed: \(reason)") }
        if let timer = housekeepingTimer { loop.cancelTimer(timer) }
        if let timer = deadlineTimer { loop.cancelTimer(timer) }
        loop.deregister(fd)
        System.close(fd)
        let (writer, unsent) = pending.withLock { state -> (CheckedContinuation<Void, any Error>?, Int) in
            state.cancelled = true
            defer {
                state.writer = nil
                state.unsent = 0
                state.chunks = []
            }
            return (state.writer, state.unsent)
        }
        writer?.resume(throwing: CancellationError())
        if unsent > 0 { server.heldAnswerBytes.subtract(unsent, ordering: .relaxed) }
        if let response = current {
            current = nil
            response.cancelByTransport()
            response.logLine(server: server, cancelled: true)
            server.callEnded()
        }
        inbox = []
        inboxStart = 0
        server.connectionClosed(self)
    }

    private func scheduleHousekeeping() {
        housekeepingTimer = loop.scheduleTimer(after: .seconds(1)) { [self] in housekeeping() }
    }

    /// Closes idle connections, refuses requests that arrive too slowly (408), and gives up on
    /// clients that take none of their answer (``ServerConfiguration/sendTimeout``).
    private func housekeeping() {
        guard !closed else { return }
        let now = System.monotonicNanoseconds()
        if let stalled = outputStalledSince, now &- stalled >= server.configuration.sendTimeout.clockNanoseconds {
            server.logger.info("closing the HTTP/1.1 connection from \(peer): it took no data for \(server.configuration.sendTimeout)")
            return close(reason: "send timeout")
        }
        if current == nil {
            if let began = requestBegan {
                let limit = headScanned || chunkedHead != nil ? timeouts.request : timeouts.head
                if now &- began >= limit.clockNanoseconds {
                    requestBegan = nil
                    refuse(status: 408, message: "The request did not arrive within \(limit).")
                    flushOutput()
                    if closed { return }
                }
            } else if output.isEmpty && now &- idleSince >= timeouts.idle.clockNanoseconds {
                return close(reason: "idle")
            }
        }
        scheduleHousekeeping()
    }
}

/// The answer to one HTTP/1.x request (``WebResponse``): its head framed by the transport —
/// `content-length` for a whole body, chunked for a streamed one (close-delimited for an
/// HTTP/1.0 client) — and its log line. Thread-safe.
final class HTTP1Response: WebResponse {
    private let connection: HTTP1Connection
    let method: String
    let version: (major: Int, minor: Int)
    let keepAlive: Bool
    let path: String
    let arrival: ContinuousClock.Instant

    private struct State {
        var record = WebAnswerRecord()
        var streaming = false
        var cancelled = false
        var cancelActions: [@Sendable () -> Void] = []
        var status: Int? {
            get { record.status }
            set { record.status = newValue }
        }
        var ended: Bool {
            get { record.ended }
            set { record.ended = newValue }
        }
    }

    private let state = Mutex(State())

    static let plainText: WebHeaders = ["content-type": "text/plain; charset=utf-8", "cache-control": "no-store"]

    init(
        connection: HTTP1Connection, method: String, version: (Int, Int), keepAlive: Bool, path: String,
        arrival: ContinuousClock.Instant
    ) {
        self.connection = connection
        self.method = method
        self.version = version
        self.keepAlive = keepAlive
        self.path = path
        self.arrival = arrival
    }

    func send(status: Int, headers: WebHeaders, body: Data) {
        let first = state.withLock { state -> Bool in
            guard state.status == nil else { return false }
            state.status = status
            state.ended = true
            return true
        }
        guard first else { return }
        let bodyless = method == "HEAD" || status == 204 || status == 304 || (100..<200).contains(status)
        var bytes = head(status: status, headers: headers, framing: status == 204 || status == 304 ? .none : .length(body.count))
        if !bodyless { bytes.append(body) }
        connection.enqueue(bytes, final: true)
    }

    func start(status: Int, headers: WebHeaders) {
        let first = state.withLock { state -> Bool in
            guard state.status == nil else { return false }
            state.status = status
            state.streaming = true
            return true
        }
        guard first else { return }
        let headOnly = method == "HEAD"
        connection.enqueue(head(status: status, headers: headers, framing: headOnly ? .length(0) : chunked ? .chunked : .close), final: headOnly)
        if headOnly { state.withLock { $0.ended = true } }
    }

    /// Whether a streamed body is chunked (HTTP/1.1) rather than ended by closing (HTTP/1.0).
    private var chunked: Bool { version.major == 1 && version.minor >= 1 }

    func write(_ bytes: Data) async throws {
        let open = state.withLock { $0.streaming && !$0.ended && !$0.cancelled }
        guard open else { throw CancellationError() }
        guard !bytes.isEmpty else { return }  // an empty chunk would end the body
        if method == "HEAD" { return }
        var framed = Data()
        if chunked {
            framed.reserveCapacity(bytes.count + 12)
            framed.append(contentsOf: Array(String(bytes.count, radix: 16).utf8))
            framed.append(contentsOf: [13, 10])
            framed.append(bytes)
            framed.append(contentsOf: [13, 10])
        } else {
            framed = bytes
        }
        connection.enqueue(framed, final: false)
        try await connection.waitUntilDrained()
    }

    func end() {
        let streaming = state.withLock { state -> Bool in
            guard state.streaming, !state.ended else { return false }
            state.ended = true
            return true
        }
        guard streaming else { return }
        connection.enqueue(chunked ? Self.lastChunk : Data(), final: true)
    }

    private static let lastChunk = Data("0\r\n\r\n".utf8)

    func onCancel(_ action: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            if state.cancelled { return true }
            state.cancelActions.append(action)
            return false
        }
        if runNow { action() }
    }

    var isCancelled: Bool { state.withLock { $0.cancelled } }

    func setDeadline(_ deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) {
        connection.scheduleDeadline(for: self, at: deadline, action)
    }

    func noteCall(path: String, status: RPCError?, requestID: RequestID?) {
        state.withLock { $0.record.note(path: path, status: status, requestID: requestID) }
    }

    func noteCallStarted(path: String, trace: TraceContext) {
        connection.server.webCallStarted(path: path)
        state.withLock { $0.record.callStarted(path: path, trace: trace) }
    }

    /// The client went away, or the server closed the connection, before the answer ended.
    func cancelByTransport() {
        let actions = state.withLock { state -> [@Sendable () -> Void] in
            guard !state.cancelled else { return [] }
            state.cancelled = true
            defer { state.cancelActions = [] }
            return state.ended ? [] : state.cancelActions
        }
        for action in actions { action() }
    }

    /// Writes the request's one log line.
    func logLine(server: HTTP2ServerCore, cancelled: Bool = false) {
        let record = state.withLock { $0.record }
        record.log(server: server, path: path, peer: connection.peer, arrival: arrival, cancelled: cancelled && !record.ended)
    }

    /// How the body of an answer is framed.
    private enum Framing {
        case none
        case length(Int)
        case chunked
        /// Ended by closing the connection (a streamed body to an HTTP/1.0 client).
        case close
    }

    private func head(status: Int, headers: WebHeaders, framing: Framing) -> Data {
        // Written as bytes into one buffer: building a String and converting it cost more than
        // the rest of an answer's framing.
        var bytes = Data()
        bytes.reserveCapacity(256)
        func add(_ text: String) { bytes.append(contentsOf: text.utf8) }
        add("HTTP/1.1 \(status) \(HTTPStatusText.reason(status))\r\n")
        for (name, value) in headers where !Self.transportHeaders.contains(name) {
            add(name)
            add(": ")
            // Values come from our own handlers; CR, LF and NUL are dropped all the same, so no
            // value can ever start a header or an answer of its own.
            bytes.append(contentsOf: value.utf8.lazy.filter { $0 != 13 && $0 != 10 && $0 != 0 })
            add("\r\n")
        }
        switch framing {
        case .none: break
        case .length(let count): add("content-length: \(count)\r\n")
        case .chunked: add("transfer-encoding: chunked\r\n")
        case .close: break
        }
        add("date: ")
        add(HTTPStatusText.date())
        add("\r\n")
        let closes: Bool
        if case .close = framing { closes = true } else { closes = !keepAlive }
        if closes { add("connection: close\r\n") } else if version.minor == 0 { add("connection: keep-alive\r\n") }
        add("\r\n")
        return bytes
    }

    /// Headers the transport writes itself.
    private static let transportHeaders: Set<String> = ["content-length", "transfer-encoding", "connection", "keep-alive", "date"]
}

/// Reason phrases and the `date` header's value.
enum HTTPStatusText {
    static func reason(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 417: "Expectation Failed"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 499: "Client Closed Request"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default: "Status \(status)"
        }
    }

    private static let cached = Mutex<(second: Int, text: String)>((-1, ""))

    /// Now, as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), formatted once a second.
    static func date() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let second = Int(now.tv_sec)
        return cached.withLock { cache in
            if cache.second == second { return cache.text }
            var time = time_t(second)
            var parts = tm()
            gmtime_r(&time, &parts)
            let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
            let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
            func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
            let text = "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
                + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
            cache = (second, text)
            return text
        }
    }
}
