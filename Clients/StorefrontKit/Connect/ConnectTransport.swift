package import Foundation
#if canImport(FoundationNetworking)
package import FoundationNetworking
#endif
package import RPC
import Synchronization

/// Carries ``RPC/RPCClient``'s calls to the gateway over the Connect protocol, JSON codec
/// (API.md §9; connectrpc.com/docs/protocol) on `URLSession`: a unary call is a `POST` of the
/// JSON message answered with the JSON response or a Connect error; a streaming call posts
/// enveloped messages (`application/connect+json`) and reads the response's envelopes as
/// they arrive, up to the end-of-stream message. Deadlines travel as `connect-timeout-ms`
/// and are kept here too; metadata travels as headers; cancelling a call cancels its URL task.
///
/// Plain `http://` goes over HTTP/1.1 (libcurl, under FoundationNetworking on Linux, speaks
/// HTTP/2 only over TLS; Apple's URLSession likewise), which the gateway serves on the same
/// port as gRPC.
///
/// Thread-safe; one per server.
package final class ConnectTransport: ClientTransport {
    /// Where the gateway listens, e.g. `https://shop.example.com` (a path prefix is kept).
    package let baseURL: URL
    /// The largest response message accepted (API.md §1's limit).
    package let maxMessageSize: Int
    /// The most bytes of a stream's messages a call keeps unread before it ends
    /// `RESOURCE_EXHAUSTED` (``ConnectResponseState/maxUnreadBytes``): `URLSession` reads on
    /// whether the reader keeps up or not — FoundationNetworking cannot pause a transfer
    /// (suspending a task removes it from libcurl, which starts the request over on resume) — so
    /// a reader that falls this far behind loses its stream rather than the app its memory.
    package let maxUnreadBytes: Int
    /// How long a stream may stay silent before it counts as lost.
    package let streamIdleTimeout: Duration
    private let session: URLSession
    private let delegate: ConnectSessionDelegate
    private let interceptors: [any RequestInterceptor]
    /// Which paths are streaming methods (the rest are sent as unary calls).
    private let streamingPaths: Set<String>
    private let closed = PortableMutex(false)

    /// A transport to `baseURL` whose session is made from `sessionConfiguration`; `methods`
    /// names the streaming methods, `interceptors` see every request; a stream's reader may
    /// leave `maxUnreadBytes` unread.
    package init(
        baseURL: URL, sessionConfiguration: URLSessionConfiguration = .default, methods: [MethodInfo],
        interceptors: [any RequestInterceptor] = [], maxMessageSize: Int = 4 * 1024 * 1024,
        maxUnreadBytes: Int = 4 * 1024 * 1024, streamIdleTimeout: Duration = .seconds(3600)
    ) {
        self.baseURL = baseURL
        self.maxMessageSize = maxMessageSize
        self.maxUnreadBytes = maxUnreadBytes
        self.streamIdleTimeout = streamIdleTimeout
        self.interceptors = interceptors
        streamingPaths = Set(methods.filter { $0.kind != .unary }.map(\.path))
        delegate = ConnectSessionDelegate(interceptors: interceptors)
        let configuration = sessionConfiguration.copy() as? URLSessionConfiguration ?? sessionConfiguration
        configuration.urlCache = nil  // calls are never answered from a cache
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    deinit {
        // The session holds its delegate until invalidated.
        session.invalidateAndCancel()
    }

    // MARK: ClientTransport

    /// Starts an attempt of the call on `path`; the request goes out at `finishSending()`.
    package func startCall(path: String, options: CallOptions, prepare: (any ClientCall) -> Void) throws(RPCError) -> any ClientCall {
        guard !isClosed else { throw Self.closedError }
        if let deadline = options.deadline, deadline <= .now {
            throw RPCError(code: .deadlineExceeded, message: "The call's deadline passed before it started.")
        }
        let call = ConnectCall(path: path, streaming: streamingPaths.contains(path), options: options, transport: self)
        prepare(call)
        return call
    }

    /// Whether ``close()`` was called.
    package var isClosed: Bool { closed.withLock { $0 } }

    /// What a call meets once the transport has closed.
    static let closedError = RPCError(code: .unavailable, message: "The client is closed.")

    /// Ends every open call with `UNAVAILABLE` and cancels their requests; no call starts after.
    package func close() async {
        // Set under the lock ``start(_:for:)`` holds while it registers a task: a call is
        // either registered before this (and ended below) or meets the flag (and never makes a
        // task on the invalidated session, which traps).
        closed.withLock { $0 = true }
        for call in delegate.openCalls { call.end(with: Self.closedError, cancellingTask: true) }
        session.invalidateAndCancel()
    }

    // MARK: Requests

    /// Starts `request` as a data task whose events go to `call`; nil once the transport has
    /// closed (its session is invalidated: a new task there traps).
    func start(_ request: URLRequest, for call: ConnectCall) -> URLSessionDataTask? {
        closed.withLock { closed -> URLSessionDataTask? in
            guard !closed else { return nil }
            let task = session.dataTask(with: request)
            delegate.register(task, request: request, for: call)
            task.resume()
            return task
        }
    }

    /// The HTTP request of a call on `path` carrying `messages` (one for a unary call, the
    /// envelopes of a stream), with `options`' metadata, request id and deadline, after the
    /// interceptors have seen it.
    func urlRequest(path: String, streaming: Bool, messages: [Data], options: CallOptions) -> URLRequest {
        var request = URLRequest(url: url(forPath: path))
        request.httpMethod = "POST"
        for entry in options.metadata where Metadata.isCustom(entry.name) {
            request.addValue(entry.value, forHTTPHeaderField: entry.name)
        }
        if let requestID = options.requestID { request.setValue(requestID.description, forHTTPHeaderField: MetadataKey.requestID) }
        request.setValue(streaming ? ConnectWire.streamingContentType : ConnectWire.unaryContentType, forHTTPHeaderField: "content-type")
        request.setValue("1", forHTTPHeaderField: ConnectWire.protocolVersionHeader)
        if streaming {
            var body: [UInt8] = []
            for message in messages { MessageFraming.append(message, to: &body) }
            request.httpBody = Data(body)
        } else {
            request.httpBody = messages.first ?? Data("{}".utf8)
        }
        if let deadline = options.deadline {
            let remaining = ContinuousClock.now.duration(to: deadline)
            request.setValue(ConnectWire.timeoutHeaderValue(remaining), forHTTPHeaderField: ConnectWire.timeoutHeader)
            // URLSession's own timeout only backs up the deadline kept by the call.
            request.timeoutInterval = remaining.timeInterval + 5
        } else {
            request.timeoutInterval = streamIdleTimeout.timeInterval
        }
        for interceptor in interceptors { interceptor.intercept(&request) }
        return request
    }

    /// `baseURL` followed by `path` (which starts with `/`).
    private func url(forPath path: String) -> URL {
        var base = baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        return URL(string: base + path) ?? baseURL.appendingPathComponent(path)
    }
}

/// The fixed strings of Connect's JSON protocol.
enum ConnectWire {
    /// A unary request's and response's content type.
    static let unaryContentType = "application/json"
    /// A streaming request's and response's content type.
    static let streamingContentType = "application/connect+json"
    /// The protocol version header, always `1`.
    static let protocolVersionHeader = "connect-protocol-version"
    /// The deadline header, in milliseconds.
    static let timeoutHeader = "connect-timeout-ms"

    /// `connect-timeout-ms` for `remaining`: whole milliseconds rounded up, at least 1, at
    /// most the spec's 10 digits.
    static func timeoutHeaderValue(_ remaining: Duration) -> String {
        let (seconds, attoseconds) = remaining.components
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return String(min(max(milliseconds, 1), 9_999_999_999))
    }
}

extension Duration {
    /// The duration in seconds, as Foundation counts time.
    var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
