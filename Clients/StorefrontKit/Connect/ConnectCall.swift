import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import RPC
import Synchronization

/// One attempt of a call over Connect (``RPC/ClientCall``): the request messages are kept
/// until ``finishSending()``, which sends them as one HTTP request — Connect over HTTP/1.1
/// carries a request body whole, and every method of API.md sends one message, or a short
/// client stream. The response is read as it arrives (``ConnectTransport``'s session delegate
/// feeds ``ConnectResponseState``): a unary body whole, a stream's envelopes one by one.
///
/// Thread-safe: the state lives behind a lock; readers and the session's delegate queue meet there.
final class ConnectCall: ClientCall {
    /// The method path, e.g. `/shop.auth.v1.AuthService/SignIn`.
    let path: String
    /// Whether the method streams (Connect's enveloped protocol) or is unary (plain JSON).
    let streaming: Bool
    private let options: CallOptions
    private let transport: ConnectTransport
    private let state: PortableMutex<ConnectResponseState>

    /// An attempt of the call on `path` with `options`, sent through `transport`.
    init(path: String, streaming: Bool, options: CallOptions, transport: ConnectTransport) {
        self.path = path
        self.streaming = streaming
        self.options = options
        self.transport = transport
        state = PortableMutex(ConnectResponseState(
            streaming: streaming, maxMessageSize: transport.maxMessageSize, maxUnreadBytes: transport.maxUnreadBytes))
    }

    // MARK: Sending

    /// Keeps `message` for the request; a unary or server-streaming method takes one.
    func send(_ message: Data) async throws {
        try state.withLock { state throws(RPCError) in
            if let status = state.status, case .failure(let error) = status { throw error }
            guard !state.sendingFinished else {
                throw RPCError(code: .internal, message: "The call has already finished sending.")
            }
            state.requests.append(message)
        }
    }

    /// Sends the request: the kept messages as the body, the metadata as headers.
    func finishSending() {
        let requests = state.withLock { state -> [Data]? in
            guard !state.sendingFinished, state.status == nil else { return nil }
            state.sendingFinished = true
            return state.requests
        }
        guard let requests else { return }
        let request = transport.urlRequest(path: path, streaming: streaming, messages: requests, options: options)
        guard let task = transport.start(request, for: self) else {
            return end(with: ConnectTransport.closedError, cancellingTask: false)
        }
        let cancelled = state.withLock { state -> Bool in
            state.task = task
            return state.status != nil
        }
        if cancelled { task.cancel() }  // ended (cancelled, or the deadline) while it started
        if let deadline = options.deadline { watch(deadline) }
    }

    // MARK: Reading

    /// The next response message; nil after the last of a successful call.
    func nextMessage() async throws -> Data? {
        try await withCheckedThrowingContinuation { continuation in
            let outcome = state.withLock { state -> Result<Data?, RPCError>? in
                if let next = state.takeMessage() { return next }
                state.reader = continuation
                return nil
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    /// The response headers once they arrive; empty when the call ended without any.
    func responseHeaders() async throws -> Metadata {
        try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLock { state -> Metadata? in
                if let headers = state.headers { return headers }
                if state.status != nil { return Metadata() }
                state.headerWaiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Whether the server began a successful answer: an HTTP 200 head arrived. A Connect
    /// error answer (any other status, its error in the body) is what gRPC calls
    /// Trailers-Only — a status without response headers — so an `UNAVAILABLE` one may be
    /// retried (gRFC A6), as ``RPC/RetryPolicy`` does for calls that saw no headers.
    var hasResponseHeaders: Bool { state.withLock { $0.answerBegan } }

    /// Whether the server answered (any response head), as opposed to a call never delivered.
    var serverAnswered: Bool { state.withLock { $0.headers != nil } }

    // MARK: Ending

    /// Cancels the call: the URL task is cancelled, and readers get `CANCELLED`.
    func cancel() { end(with: .callCancelled, cancellingTask: true) }

    /// Ends the call with `error` unless it has ended already; cancels the URL task when asked.
    func end(with error: RPCError, cancellingTask: Bool) {
        let (wakeUps, task) = state.withLock { state in (state.end(.failure(error)), state.task) }
        wakeUps.perform()
        if cancellingTask { task?.cancel() }
    }

    /// Ends the call with `DEADLINE_EXCEEDED` at `deadline` if it is still open then.
    private func watch(_ deadline: ContinuousClock.Instant) {
        let timer = Task { [weak self] in
            guard (try? await Task.sleep(until: deadline, clock: .continuous)) != nil, let self else { return }
            end(with: RPCError(code: .deadlineExceeded, message: "The call's deadline passed."), cancellingTask: true)
        }
        let ended = state.withLock { state -> Bool in
            if state.status == nil { state.deadlineTimer = timer }
            return state.status != nil
        }
        if ended { timer.cancel() }
    }

    // MARK: Events of the URL task (the session delegate's queue)

    /// The response head arrived.
    func received(_ response: HTTPURLResponse) {
        state.withLock { $0.receive(head: response) }.perform()
    }

    /// Body bytes arrived.
    func received(_ data: Data) {
        let (wakeUps, failed) = state.withLock { state in state.receive(body: data) }
        wakeUps.perform()
        if failed { state.withLock { $0.task }?.cancel() }
    }

    /// The URL task completed, with `error` when it failed.
    func completed(with error: (any Error)?) {
        let closed = transport.isClosed
        state.withLock { $0.complete(error: error, transportClosed: closed) }.perform()
    }
}
