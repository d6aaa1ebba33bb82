public import Foundation
internal import Synchronization

/// A client of one upstream: typed calls of all four kinds, deadlines, cancellation and gRFC A6
/// retries, over whatever ``ClientTransport`` carries them — the HTTP/2 client in a process, a
/// router in the same process in a test.
///
/// Thread-safe; share one per upstream.
public final class RPCClient: Sendable {
    /// What carries the calls.
    public let transport: any ClientTransport
    /// When and how often idempotent calls are retried.
    public let retry: RetryPolicy
    /// Task-free unary calls whose retry waits for its delay: ``close()`` ends them at once.
    let waitingRetries = PortableMutex<[ObjectIdentifier: UnaryCallHandle]>([:])

    /// A client whose calls `transport` carries, retried by `retry`.
    public init(transport: any ClientTransport, retry: RetryPolicy = RetryPolicy()) {
        self.transport = transport
        self.retry = retry
    }

    /// Closes the transport: calls in flight fail with `UNAVAILABLE`, and a retry still waiting
    /// for its delay ends with `CANCELLED` at once.
    public func close() async {
        // The transport first: a retry that begins to wait after this sees the client closed
        // (``UnaryCallHandle``), and one that began before is in the list taken next.
        await transport.close()
        let waiting = waitingRetries.withLock { waiting in
            defer { waiting.removeAll() }
            return Array(waiting.values)
        }
        for handle in waiting { handle.cancel() }
    }

    /// Whether ``close()`` has been called (a closed client makes no calls, so retries stop).
    public var isClosed: Bool { transport.isClosed }

    /// Gives up the transport's current connections (see ``ClientTransport/replaceConnections(reason:)``).
    public func replaceConnections(reason: String) { transport.replaceConnections(reason: reason) }

    /// Has the transport's connections confirm their server answers (see
    /// ``ClientTransport/confirmConnections(within:)``).
    public func confirmConnections(within timeout: Duration) { transport.confirmConnections(within: timeout) }

    // MARK: Raw calls

    /// Starts a call on `path`; the caller sends, half-closes and reads through the result.
    public func makeCall(path: String, options: CallOptions) throws(RPCError) -> any ClientCall {
        try transport.startCall(path: path, options: options) { _ in }
    }

    /// Runs `body` on a new call, cancelling the call if the task is cancelled or `body`
    /// throws before the call finished.
    public func withCall<Result: Sendable>(
        path: String, options: CallOptions, _ body: (any ClientCall) async throws -> Result
    ) async throws -> Result {
        let call = try makeCall(path: path, options: options)
        return try await withTaskCancellationHandler {
            do {
                return try await body(call)
            } catch {
                call.cancel()
                throw error
            }
        } onCancel: {
            call.cancel()
        }
    }

    /// Runs `body` on a new call for `method`, again on a new call when ``retry`` allows it
    /// (``RetryPolicy/retryDelay(after:of:failedWith:sawResponseHeaders:deadline:)``: `UNAVAILABLE`
    /// before any response header, for idempotent methods and refused streams, within the
    /// deadline). `mayRetry` can veto a retry (a gateway whose circuit breaker opened).
    public func withRetries<Result: Sendable>(
        _ method: MethodInfo, options: CallOptions, mayRetry: (RPCError) -> Bool = { _ in true },
        _ body: (any ClientCall) async throws -> Result
    ) async throws -> Result {
        var attempt = 1
        while true {
            var sawHeaders = false
            do {
                return try await withCall(path: method.path, options: options) { call in
                    do {
                        return try await body(call)
                    } catch {
                        sawHeaders = call.hasResponseHeaders
                        throw error
                    }
                }
            } catch let error as RPCError {
                guard !isClosed,
                    let delay = retry.retryDelay(
                        after: attempt, of: method, failedWith: error, sawResponseHeaders: sawHeaders, deadline: options.deadline),
                    mayRetry(error)
                else { throw error }
                try await Task.sleep(for: delay)
                attempt += 1
            }
        }
    }

    // MARK: Calls without a task

    /// Makes a unary call of raw bytes without a task: `completion` is told the response
    /// message or the error, once — on the transport's thread; or on the calling thread
    /// (before this returns) when the call cannot start; or on the thread that cancels it.
    /// Retried as ``withRetries(_:options:mayRetry:_:)`` retries, while `mayRetry` (told the
    /// failed attempt) agrees.
    ///
    /// - Returns: a handle that cancels the call (and any retry still to come).
    @discardableResult
    public func startUnary(
        _ method: MethodInfo, request: Data, options: CallOptions,
        mayRetry: @escaping @Sendable (RPCError, (any ClientCall)?) -> Bool = { _, _ in true },
        completion: @escaping @Sendable (_ result: Result<Data, RPCError>, _ lastAttempt: (any ClientCall)?) -> Void
    ) -> UnaryCallHandle {
        let handle = UnaryCallHandle(
            client: self, method: method, request: request, options: options, mayRetry: mayRetry, completion: completion)
        handle.start(1)
        return handle
    }

    // MARK: Typed calls

    /// A unary call. Idempotent methods are retried on `UNAVAILABLE` before any response header.
    public func unary<Request, Response>(
        _ method: MethodDescriptor<Request, Response>, _ request: Request, options: CallOptions = CallOptions()
    ) async throws -> Response {
        let payload = try JSONCodec.shared.encode(request)
        return try await withRetries(method.info, options: options) { call in
            try await call.send(payload)
            call.finishSending()
            return try JSONCodec.shared.decode(Response.self, from: try await Self.singleRawResponse(from: call))
        }
    }

    /// A server-streaming call; `body` reads the responses while the call is open.
    public func serverStreaming<Request, Response, Result: Sendable>(
        _ method: MethodDescriptor<Request, Response>, _ request: Request, options: CallOptions = CallOptions(),
        _ body: @Sendable (ResponseMessages<Response>) async throws -> Result
    ) async throws -> Result {
        let payload = try JSONCodec.shared.encode(request)
        return try await withRetries(method.info, options: options) { call in
            try await call.send(payload)
            call.finishSending()
            if method.info.idempotent { _ = try await call.responseHeaders() }  // retry boundary
            let result = try await body(ResponseMessages(call: call))
            while try await call.nextMessage() != nil {}  // the status decides, even if body stopped early
            return result
        }
    }

    /// A client-streaming call; `requests` sends the messages, then the single response is returned.
    public func clientStreaming<Request, Response>(
        _ method: MethodDescriptor<Request, Response>, options: CallOptions = CallOptions(),
        _ requests: @Sendable (RequestSender<Request>) async throws -> Void
    ) async throws -> Response {
        try await withCall(path: method.path, options: options) { call in
            try await requests(RequestSender(call: call))
            call.finishSending()
            return try JSONCodec.shared.decode(Response.self, from: try await Self.singleRawResponse(from: call))
        }
    }

    /// A bidirectional call: `requests` and `responses` run concurrently.
    public func bidirectional<Request, Response, Result: Sendable>(
        _ method: MethodDescriptor<Request, Response>, options: CallOptions = CallOptions(),
        requests: @escaping @Sendable (RequestSender<Request>) async throws -> Void,
        responses: @Sendable (ResponseMessages<Response>) async throws -> Result
    ) async throws -> Result {
        try await withCall(path: method.path, options: options) { call in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    try await requests(RequestSender(call: call))
                    call.finishSending()
                }
                let result = try await responses(ResponseMessages(call: call))
                while try await call.nextMessage() != nil {}
                try await group.waitForAll()
                return result
            }
        }
    }

    /// Reads the one response message of a unary-response call without decoding it (a proxy
    /// forwards the bytes); none or two are `INTERNAL`.
    public static func singleRawResponse(from call: any ClientCall) async throws -> Data {
        guard let data = try await call.nextMessage() else { throw RPCError.noResponseMessage }
        guard try await call.nextMessage() == nil else { throw RPCError.extraResponseMessage }
        return data
    }
}

/// Sends request messages of a streaming call.
public struct RequestSender<Message: Encodable & Sendable>: Sendable {
    let call: any ClientCall

    /// Encodes and sends one message, suspending while the server is slow to read.
    public func send(_ message: Message) async throws {
        try await call.send(try JSONCodec.shared.encode(message))
    }
}

/// The response messages of a streaming call; iterating ends at the status (throwing it
/// if the call failed).
public struct ResponseMessages<Message: Decodable & Sendable>: AsyncSequence, Sendable {
    public typealias Element = Message
    let call: any ClientCall

    /// An iterator over the call's messages.
    public func makeAsyncIterator() -> Iterator { Iterator(call: call) }

    /// Reads and decodes messages one at a time.
    public struct Iterator: AsyncIteratorProtocol {
        let call: any ClientCall

        /// The next message, or nil after the last of a successful call.
        public mutating func next() async throws -> Message? {
            guard let data = try await call.nextMessage() else { return nil }
            return try JSONCodec.shared.decode(Message.self, from: data)
        }
    }
}
