public import Foundation

/// What carries a client's calls to a server and back: the HTTP/2 client of RPCHTTP2, or a
/// router in this very process (``InProcessTransport``). A transport only moves messages,
/// metadata and statuses; the client API on top of it (``RPCClient``: typed calls, retries,
/// cancellation) is the same whichever carries them.
///
/// Thread-safe; one per upstream.
public protocol ClientTransport: Sendable {
    /// Starts one attempt of a call on `path`, with `options`' metadata, deadline and request
    /// id; `prepare` sees the call before it starts (so it can be tracked or cancelled first).
    ///
    /// - Throws: `DEADLINE_EXCEEDED` when the deadline has passed, `UNAVAILABLE` when the
    ///   transport is closed or cannot reach the server now.
    func startCall(path: String, options: CallOptions, prepare: (any ClientCall) -> Void) throws(RPCError) -> any ClientCall

    /// Starts one attempt of a unary call without a task: `request` is its one message, and
    /// `observer` is told the response message or the error, once. `prepare` sees the call
    /// before it starts. A transport that has no cheaper way runs the call in a task.
    func startUnaryCall(
        path: String, request: Data, options: CallOptions, observer: any UnaryCallObserver,
        prepare: (any ClientCall) -> Void
    ) throws(RPCError)

    /// Whether ``close()`` has been called: a closed transport starts no calls.
    var isClosed: Bool { get }

    /// Closes the transport: calls in flight fail with `UNAVAILABLE`.
    func close() async

    /// Gives up the current connections without closing: their calls fail with `UNAVAILABLE`,
    /// and the next call connects afresh. A transport without connections does nothing.
    func replaceConnections(reason: String)

    /// Has each current connection confirm within `timeout` that its server still answers,
    /// giving up those that do not. A transport without connections does nothing.
    func confirmConnections(within timeout: Duration)
}

extension ClientTransport {
    /// Runs the unary call in a task over ``startCall(path:options:prepare:)``.
    public func startUnaryCall(
        path: String, request: Data, options: CallOptions, observer: any UnaryCallObserver,
        prepare: (any ClientCall) -> Void
    ) throws(RPCError) {
        let call = try startCall(path: path, options: options, prepare: prepare)
        Task {
            let result: Result<Data, RPCError>
            do {
                try await call.send(request)
                call.finishSending()
                result = .success(try await RPCClient.singleRawResponse(from: call))
            } catch {
                call.cancel()  // a call still open (a second response message) ends here, as on the wire
                result = .failure(RPCError(converting: error))
            }
            observer.unaryCall(call, endedWith: result)
        }
    }

    /// Nothing to replace.
    public func replaceConnections(reason: String) {}

    /// Nothing to confirm.
    public func confirmConnections(within timeout: Duration) {}
}

/// One attempt of a call as its caller sees it: request messages out, response messages in,
/// and the status at the end (thrown by ``nextMessage()`` when it is not OK).
///
/// Thread-safe: one task may send while another reads.
public protocol ClientCall: AnyObject, Sendable {
    /// The method path, e.g. `/shop.catalog.v1.CatalogService/GetProduct`.
    var path: String { get }

    /// Sends one request message, suspending while too many bytes wait to be sent.
    func send(_ message: Data) async throws

    /// Half-closes: no more request messages.
    func finishSending()

    /// The next response message; `nil` after the last one of a successful call.
    /// - Throws: the call's ``RPCError`` once the messages before it have been read.
    func nextMessage() async throws -> Data?

    /// The response headers (initial metadata), once they arrive; none (empty) when the call
    /// ended without any (a Trailers-Only answer).
    func responseHeaders() async throws -> Metadata

    /// Whether response headers have arrived (a retry is no longer transparent after that).
    var hasResponseHeaders: Bool { get }

    /// Whether the server answered at all — headers, or a status — as opposed to a call that
    /// failed for want of a connection (what a circuit breaker counts).
    var serverAnswered: Bool { get }

    /// Cancels the call: the server is told, and readers and writers get `CANCELLED`.
    func cancel()
}

/// Told when one attempt of a unary call made without a task ends
/// (``ClientTransport/startUnaryCall(path:request:options:observer:prepare:)``): an object
/// rather than a closure, so no context is allocated per attempt.
public protocol UnaryCallObserver: AnyObject, Sendable {
    /// `call` ended with its single response message, or the error.
    func unaryCall(_ call: any ClientCall, endedWith result: Result<Data, RPCError>)
}

/// What a client's call ends with when it is cancelled, or its server's answer is not one message.
extension RPCError {
    /// The call was cancelled (by its caller, or a task that was).
    public static let callCancelled = RPCError(code: .cancelled, message: "The call was cancelled.")
    /// The server sent no response message.
    public static let noResponseMessage = RPCError(code: .internal, message: "The server sent no response message.")
    /// The server sent more than one response message.
    public static let extraResponseMessage = RPCError(code: .internal, message: "The server sent more than one response message.")
}
