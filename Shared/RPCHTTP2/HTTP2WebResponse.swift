internal import Foundation
internal import RPC
internal import Synchronization

/// The answer to an HTTP/2 request that is not gRPC (``WebResponse``): its head and body go
/// out on the request's stream as HEADERS and DATA, without gRPC framing or trailers, with
/// the same flow control, answer-buffer charge and send timeout as a call's answer.
/// Thread-safe.
final class HTTP2WebResponse: WebResponse {
    private let stream: ServerStream
    let method: String
    /// The request's path, without its query (where tokens travel): for the log line.
    let path: String
    let peer: String

    private let state = Mutex(WebAnswerRecord())

    init(stream: ServerStream, method: String, path: String, peer: String) {
        self.stream = stream
        self.method = method
        self.path = ServerConnection.pathWithoutQuery(path)
        self.peer = peer
    }

    func send(status: Int, headers: WebHeaders, body: Data) {
        guard claim(status) else { return }
        let bodyless = method == "HEAD" || status == 204 || status == 304
        var head = Self.fields(status: status, headers: headers)
        if status != 204 && status != 304 { head.append(("content-length", String(body.count))) }
        stream.startWebAnswer(head: head, body: bodyless ? nil : body, end: true)
    }

    func start(status: Int, headers: WebHeaders) {
        guard claim(status) else { return }
        stream.startWebAnswer(head: Self.fields(status: status, headers: headers), body: nil, end: method == "HEAD")
    }

    func write(_ bytes: Data) async throws {
        guard state.withLock({ $0.status != nil }) else { throw CancellationError() }
        guard !bytes.isEmpty, method != "HEAD" else { return }
        try await stream.write(bytes)
    }

    func end() {
        stream.endWebAnswer()
    }

    func onCancel(_ action: @escaping @Sendable () -> Void) {
        stream.addCancelAction(action)
    }

    var isCancelled: Bool { stream.shared.withLock { $0.buffers.cancellation != nil } }

    func setDeadline(_ deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) {
        stream.connection.scheduleWebDeadline(stream, at: deadline, action)
    }

    func noteCall(path: String, status: RPCError?, requestID: RequestID?) {
        state.withLock { $0.note(path: path, status: status, requestID: requestID) }
    }

    func noteCallStarted(path: String, trace: TraceContext) {
        stream.connection.server.webCallStarted(path: path)
        state.withLock { $0.callStarted(path: path, trace: trace) }
    }

    /// Takes the answer's status; false when the answer was already given.
    private func claim(_ status: Int) -> Bool {
        state.withLock { state in
            guard state.status == nil else { return false }
            state.status = status
            return true
        }
    }

    /// The request's one log line, written as its stream ends.
    func logLine(server: HTTP2ServerCore, cancelled: Bool) {
        state.withLock { $0 }.log(server: server, path: path, peer: peer, arrival: stream.startTime, cancelled: cancelled)
    }

    /// `:status` and the handler's headers, without those HTTP/2 forbids (RFC 9113 §8.2.2).
    private static func fields(status: Int, headers: WebHeaders) -> [(String, String)] {
        var fields = [(":status", String(status))]
        for (name, value) in headers where !connectionSpecific.contains(name) {
            fields.append((name, value.filter { $0 != "\r" && $0 != "\n" && $0 != "\0" }))
        }
        return fields
    }

    private static let connectionSpecific: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "content-length", "te",
    ]
}

/// What an answer to a web request was, for its log line: its HTTP status once given, and the
/// call the handler noted (``WebResponse/noteCall(path:status:requestID:)``), if any.
struct WebAnswerRecord {
    var status: Int?
    var ended = false
    private var notedPath: String?
    private var notedStatus: RPCError?
    private var notedRequestID: RequestID?
    private var noted = false
    /// The noted call's span (``WebResponse/noteCallStarted(path:trace:)``).
    var trace: TraceContext?
    /// The method path of a call counted as started when it began (``callStarted(path:trace:)``);
    /// nil when its line counts it started and finished together. A call started is a call
    /// finished by its line, even one the transport ended before the handler noted it (a
    /// watch whose client went away).
    private var startedPath: String?

    /// The call began: its method, its span, and its start counted.
    mutating func callStarted(path: String, trace: TraceContext) {
        self.trace = trace
        startedPath = path
    }

    mutating func note(path: String, status: RPCError?, requestID: RequestID?) {
        noted = true
        notedPath = path
        notedStatus = status
        notedRequestID = requestID
    }

    /// Writes the request's one line: the noted call's status, else one made of the HTTP
    /// status; `CANCELLED` when the answer did not end (the client went away first).
    func log(server: HTTP2ServerCore, path: String, peer: String, arrival: ContinuousClock.Instant, cancelled: Bool) {
        let httpStatus = status ?? 499
        var rpcStatus = noted ? notedStatus : Self.status(ofHTTP: httpStatus)
        if cancelled { rpcStatus = RPCError(code: .cancelled, message: "The client went away before the answer ended.") }
        server.logWebRequest(
            path: notedPath ?? startedPath ?? path, status: rpcStatus, httpStatus: httpStatus, requestID: notedRequestID,
            peer: peer, arrival: arrival, isCall: noted || startedPath != nil, trace: trace, startCounted: startedPath != nil)
    }

    /// The status a plain request's line gives for its HTTP status: what the answer means (a
    /// 400 is the client's bad request, not the INTERNAL a gRPC client would make of it).
    static func status(ofHTTP httpStatus: Int) -> RPCError? {
        let code: RPCCode
        switch httpStatus {
        case ..<400: return nil
        case 400, 417: code = .invalidArgument
        case 401: code = .unauthenticated
        case 403: code = .permissionDenied
        case 404, 410: code = .notFound
        case 405, 415, 501, 505: code = .unimplemented
        case 408, 504: code = .deadlineExceeded
        case 409: code = .aborted
        case 413, 429, 431: code = .resourceExhausted
        case 499: code = .cancelled
        case 503: code = .unavailable
        case 400..<500: code = .failedPrecondition
        default: code = .internal
        }
        return RPCError(code: code, message: "HTTP status \(httpStatus).")
    }
}
