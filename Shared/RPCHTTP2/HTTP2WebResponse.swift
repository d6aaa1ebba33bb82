internal import Foundation
internal import RPC
internal import Synchronization

/// The answer to an HTTP/2 request that is not gRPC (``WebResponse``): its head and body go
/// out on the request's stream as HEADERS and DATA, without gRPC framing or trailers, with
/// the same flow control, answer-buffer charge and send timeout as a call's answer.
/// Thread-safe.
final class HTTP2WebResponse: WebResponse, @unchecked Sendable {
    // Invariant for @unchecked Sendable: the lets are immutable; the rest is in `state`.
    private let stream: ServerStream
    let method: String
    /// The request's path, without its query (where tokens travel): for the log line.
    let path: String
    let peer: String

    private struct State {
        var status: Int?
        var notedPath: String?
        var notedStatus: RPCError?
        var notedRequestID: RequestID?
        var noted = false
    }

    private let state = Mutex(State())

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
        state.withLock {
            $0.noted = true
            $0.notedPath = path
            $0.notedStatus = status
            $0.notedRequestID = requestID
        }
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
        let snapshot = state.withLock { $0 }
        let httpStatus = snapshot.status ?? 499
        var status = snapshot.noted ? snapshot.notedStatus : (httpStatus < 400 ? nil : RPCError(code: .forHTTPStatus(httpStatus), message: ""))
        if cancelled { status = RPCError(code: .cancelled, message: "The stream ended before the answer.") }
        server.logWebRequest(
            path: snapshot.notedPath ?? path, status: status, httpStatus: httpStatus, requestID: snapshot.notedRequestID,
            peer: peer, arrival: stream.startTime)
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
