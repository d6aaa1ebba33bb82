import Foundation
import Logging
import RPC
import Synchronization

/// Connect (JSON) and gRPC-Web calls, translated into calls of the gateway's own router
/// (API.md §9): a call runs in-process (``RPC/LocalCall``) with the interceptors and handler
/// the same path gets over gRPC, so keys, tokens, rate limits and forwarding behave alike.
///
/// This type tells the protocols apart and sets a call up (its request id, metadata and
/// deadline); ``ConnectUnary``, ``ConnectStreaming`` and ``GRPCWebCall`` speak the wire
/// formats, and ``RPCEdge/runUnary(_:context:request:response:render:)`` and
/// ``RPCEdge/runStream(_:context:requests:response:status:headers:frame:end:)`` run the calls.
struct RPCEdge: Sendable {
    let router: Router
    /// The deadline of unary calls that arrive without one (the gRPC path's default).
    let defaultUnaryTimeout: Duration?
    let logger: Logger

    init(router: Router, defaultUnaryTimeout: Duration?, logger: Logger) {
        self.router = router
        self.defaultUnaryTimeout = defaultUnaryTimeout
        self.logger = logger
    }

    /// Serves `request` when its path names a procedure (`/<package>.<Service>/<Method>`),
    /// registered or not; false for every other path (pages, files).
    func serve(_ request: WebRequest, response: any WebResponse) -> Bool {
        // A registered path needs no look at its shape; only the rest (pages, files, unknown
        // procedures) is split.
        let route = router.method(forPath: request.path)
        guard route != nil || Self.isProcedurePath(request.path) else { return false }
        switch request.method {
        case "POST":
            let headers = CallHeaders(request.headers)
            switch WireFormat(contentType: headers.contentType) {
            case .connectUnary: ConnectUnary(edge: self).servePost(request, headers: headers, route: route, response: response)
            case .connectStreaming: ConnectStreaming(edge: self).serve(request, headers: headers, route: route, response: response)
            case .grpcWeb(let mediaType, let text):
                GRPCWebCall(edge: self, mediaType: mediaType, text: text)
                    .serve(request, headers: headers, route: route, response: response)
            case .unsupported: Self.refuseContentType(headers.contentType, response: response)
            }
        case "GET":
            ConnectUnary(edge: self).serveGet(request, headers: CallHeaders(request.headers), route: route, response: response)
        default:
            Self.refuseMethod(allowingGet: route.map { ConnectUnary.allowsGet($0.info) } ?? false, response: response)
        }
        return true
    }

    /// Whether `path` has the shape of a procedure: `/`, a service name with a dot, `/`, a method.
    static func isProcedurePath(_ path: String) -> Bool {
        let parts = path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        return parts.count == 3 && parts[0].isEmpty && parts[1].contains(UInt8(ascii: ".")) && !parts[2].isEmpty
    }

    // MARK: Call set-up

    /// The context of a call of `route`, as the gRPC path builds it, marked as come over
    /// `protocol` (``CallOrigin``); its span (continuing the request's `traceparent`, or a new
    /// trace) is noted on `response` for the call's line.
    func context(
        for route: RegisteredMethod, over protocol: CallProtocol, request: WebRequest, headers: CallHeaders,
        deadline: ContinuousClock.Instant?, response: any WebResponse
    ) -> ServerContext {
        let context = ServerContext(
            method: route.info, metadata: headers.metadata, deadline: deadline, requestID: headers.requestID,
            peer: request.peer, contentType: "application/grpc+json", logger: logger, arrival: request.arrival
        ).comingOver(`protocol`, in: request)
        response.noteCallStarted(path: route.info.path, trace: context.trace)
        return context
    }

    /// The deadline of a call of `route`: its own timeout, else the default for unary calls
    /// (streams, such as watches, keep only the client's own), counted from the request's arrival.
    func deadline(for route: RegisteredMethod, timeout: Duration?, request: WebRequest) -> ContinuousClock.Instant? {
        (timeout ?? (route.info.kind == .unary ? defaultUnaryTimeout : nil)).map { request.arrival + $0 }
    }

    /// What the edge reads of a request's headers, in one pass over them: the protocols' own
    /// fields (the first of each), and the metadata.
    struct CallHeaders {
        var contentType: String?
        var contentEncoding: String?
        var connectProtocolVersion: String?
        var connectTimeout: String?
        var connectContentEncoding: String?
        var grpcTimeout: String?
        var grpcEncoding: String?
        /// Whether `authorization` or `x-api-key` came: the answer depends on who asks.
        var hasCredentials = false
        /// The client's `x-request-id` when acceptable (``RPC/RequestID``), else a new one.
        var requestID: RequestID
        /// The headers that become the call's metadata: custom ones (``RPC/Metadata/isCustom(_:)``)
        /// other than the protocols' own (`connect-*`) and what browsers add for HTTP itself,
        /// which means nothing to a service and must not travel upstream (cookies above all).
        var metadata = Metadata()

        init(_ headers: WebHeaders) {
            var requestID: String?
            // Names are lower case already (``RPCHTTP2/WebHeaders``).
            for (name, value) in headers {
                switch name {
                case "content-type": if contentType == nil { contentType = value }
                case "content-encoding": if contentEncoding == nil { contentEncoding = value }
                case "connect-protocol-version": if connectProtocolVersion == nil { connectProtocolVersion = value }
                case "connect-timeout-ms": if connectTimeout == nil { connectTimeout = value }
                case "connect-content-encoding": if connectContentEncoding == nil { connectContentEncoding = value }
                case "grpc-timeout": if grpcTimeout == nil { grpcTimeout = value }
                case "grpc-encoding": if grpcEncoding == nil { grpcEncoding = value }
                case MetadataKey.authorization, MetadataKey.apiKey: hasCredentials = true
                case MetadataKey.requestID: if requestID == nil { requestID = value }
                default: break
                }
                if Self.isForwarded(name) { metadata.add(name, value) }
            }
            self.requestID = requestID.map(RequestID.init) ?? RequestID.next()
        }

        static func isForwarded(_ name: String) -> Bool {
            guard Metadata.isCustom(name) else { return false }
            let utf8 = name.utf8
            if utf8.starts(with: "connect-".utf8) || utf8.starts(with: "sec-".utf8)
                || utf8.starts(with: "access-control-".utf8) || utf8.starts(with: "proxy-".utf8)
            {
                return false
            }
            return !webOnlyHeaders.contains(name)
        }

        private static let webOnlyHeaders: Set<String> = [
            "accept", "accept-encoding", "accept-language", "cache-control", "content-encoding", "cookie", "dnt", "expect",
            "forwarded", "if-modified-since", "if-none-match", "origin", "pragma", "priority", "referer", "trailer",
            "upgrade-insecure-requests", "via", "x-grpc-web", "x-user-agent",
        ]
    }

    // MARK: Refusals at the HTTP level

    /// The request types a procedure accepts, for `accept-post` on a 415.
    static let acceptedContentTypes =
        "application/json, application/connect+json, application/grpc-web+json, application/grpc-web-text+json"

    /// 415 for a content type none of the protocols here speaks (protobuf codecs included).
    static func refuseContentType(_ contentType: String?, response: any WebResponse) {
        let sent = contentType.map { "'\(ClientInput.quoted($0))'" } ?? "no content-type"
        refuseContentType(
            "This procedure takes JSON: Connect (application/json, application/connect+json) or gRPC-Web "
                + "(application/grpc-web+json, application/grpc-web-text+json); got \(sent).",
            response: response)
    }

    /// 415 with `message` and the accepted types.
    static func refuseContentType(_ message: String, response: any WebResponse) {
        var headers = WebEdge.textHeaders
        headers.add("accept-post", acceptedContentTypes)
        response.send(status: 415, headers: headers, body: Data((message + "\n").utf8))
    }

    /// 405 for a method other than POST (and GET, for methods without side effects).
    static func refuseMethod(allowingGet: Bool, response: any WebResponse) {
        var headers = WebEdge.textHeaders
        headers.add("allow", allowingGet ? "GET, POST" : "POST")
        let text = allowingGet ? "Use POST, or GET with ?encoding=json&message=….\n" : "Use POST.\n"
        response.send(status: 405, headers: headers, body: Data(text.utf8))
    }
}

extension RPCEdge {
    /// What a POST's content type asks for.
    enum WireFormat: Equatable {
        /// `application/json` (charset utf-8 if any): Connect unary.
        case connectUnary
        /// `application/connect+json`: Connect streaming.
        case connectStreaming
        /// `application/grpc-web[-text][+json]`, answered with the same media type.
        case grpcWeb(mediaType: String, text: Bool)
        /// Anything else.
        case unsupported

        init(contentType: String?) {
            guard let contentType else {
                self = .unsupported
                return
            }
            if contentType == "application/json" {  // what nearly every call sends
                self = .connectUnary
                return
            }
            let parts = contentType.lowercased().split(separator: ";", omittingEmptySubsequences: false)
            let mediaType = parts[0].trimmingCharacters(in: .whitespaces)
            switch mediaType {
            case "application/json":
                // JSON is UTF-8 (RFC 8259 §8.1); a label saying otherwise is a client error.
                let charset = parts.dropFirst().lazy.map { $0.trimmingCharacters(in: .whitespaces) }
                    .first { $0.hasPrefix("charset=") }?.dropFirst("charset=".count)
                    .trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                self = charset == nil || charset == "utf-8" || charset == "utf8" ? .connectUnary : .unsupported
            case "application/connect+json": self = .connectStreaming
            case "application/grpc-web", "application/grpc-web+json": self = .grpcWeb(mediaType: mediaType, text: false)
            case "application/grpc-web-text", "application/grpc-web-text+json":
                self = .grpcWeb(mediaType: mediaType, text: true)
            default: self = .unsupported
            }
        }
    }
}

// MARK: Running calls

extension RPCEdge {
    /// A whole HTTP answer.
    struct Answer: Sendable {
        var status: Int
        var headers: WebHeaders
        var body: Data
    }

    /// What a call whose deadline passed ends with (as on the gRPC path).
    static let deadlinePassed = RPCError(code: .deadlineExceeded, message: "The deadline passed.")
    /// What a call whose client went away ends with.
    static let clientCancelled = RPCError(code: .cancelled, message: "The client cancelled the call.")

    /// Runs a unary call and answers it whole with `render`'s answer to whichever comes first:
    /// the handler's answer, the deadline (`DEADLINE_EXCEEDED`), the client leaving
    /// (`CANCELLED`) — the handler is cancelled in the last two cases. The call's line is noted
    /// (``RPCHTTP2/WebResponse/noteCall(path:status:requestID:)``) just before the answer.
    ///
    /// A handler whose interceptors need not suspend answers right here, without a task
    /// (``RPC/LocalCall/unary(_:context:request:answer:)``).
    static func runUnary(
        _ route: RegisteredMethod, context: ServerContext, request: Data, response: any WebResponse,
        render: @escaping @Sendable (Result<Data, RPCError>) -> Answer
    ) {
        let call = UnaryCall(path: route.info.path, requestID: context.requestIDValue, response: response, render: render)
        if let deadline = context.deadline, deadline <= .now { return call.finish(.failure(deadlinePassed)) }
        let cancel = LocalCall.unary(route, context: context, request: request) { result in
            call.finish(result.mapError { RPCError(converting: $0) })
        }
        // A handler that answered at once (most) needs no deadline and no cancellation.
        guard call.arm(cancel: cancel) else { return }
        if let deadline = context.deadline { response.setDeadline(deadline) { call.finish(.failure(deadlinePassed)) } }
        response.onCancel { call.finish(.failure(clientCancelled)) }
    }

    /// Runs a streaming call (or a unary one answered as a stream) in a task: the answer starts
    /// at once with `status` and `headers`, each response message goes out as `frame` makes it
    /// (``RPCHTTP2/WebResponse/write(_:)`` suspends the handler while the client is slow to
    /// read), and `end` makes the last part from the status. The client leaving or the
    /// deadline passing cancels the task.
    static func runStream(
        _ route: RegisteredMethod, context: ServerContext, requests: [Data], response: any WebResponse,
        status: Int = 200, headers: WebHeaders, frame: @escaping @Sendable (Data) -> Data,
        end: @escaping @Sendable (RPCError?) -> Data
    ) {
        let path = route.info.path
        let requestID = context.requestIDValue
        if let deadline = context.deadline, deadline <= .now {
            response.noteCall(path: path, status: deadlinePassed, requestID: requestID)
            return response.send(status: status, headers: headers, body: end(deadlinePassed))
        }
        response.start(status: status, headers: headers)
        let control = StreamControl()
        let task = Task {
            let ended = await LocalCall.run(route, context: context, requests: requests) { message in
                try await response.write(frame(message))
            }
            let outcome = control.finish(ended)
            response.noteCall(path: path, status: outcome, requestID: requestID)
            try? await response.write(end(outcome))  // throws only when the client has gone
            response.end()
        }
        control.attach(task)
        if let deadline = context.deadline { response.setDeadline(deadline) { control.expire() } }
        response.onCancel { control.cancel() }
    }

    /// One unary call's answer: given once, by whichever of its handler, its deadline and its
    /// client comes first. Thread-safe.
    private final class UnaryCall: Sendable {
        private struct State {
            /// Nil once answered, which also breaks the cycle through the response's cancel actions.
            var response: (any WebResponse)?
            var cancel: (@Sendable () -> Void)?
        }

        private let state: Mutex<State>
        private let path: String
        private let requestID: RequestID
        private let render: @Sendable (Result<Data, RPCError>) -> Answer

        init(path: String, requestID: RequestID, response: any WebResponse, render: @escaping @Sendable (Result<Data, RPCError>) -> Answer) {
            state = Mutex(State(response: response))
            self.path = path
            self.requestID = requestID
            self.render = render
        }

        /// Keeps what cancels the handler; false when the call is already answered.
        func arm(cancel: @escaping @Sendable () -> Void) -> Bool {
            state.withLock { state in
                guard state.response != nil else { return false }
                state.cancel = cancel
                return true
            }
        }

        /// Answers with `result` if nothing has yet; an answer other than the handler's own
        /// cancels the handler.
        func finish(_ result: Result<Data, RPCError>) {
            let taken = state.withLock { state -> (response: any WebResponse, cancel: (@Sendable () -> Void)?)? in
                guard let response = state.response else { return nil }
                defer { state = State() }
                return (response, state.cancel)
            }
            guard let (response, cancel) = taken else { return }
            // After the handler's own answer this does nothing; else it stops the handler's work.
            cancel?()
            let answer = render(result)
            response.noteCall(path: path, status: result.failedWith, requestID: requestID)
            response.send(status: answer.status, headers: answer.headers, body: answer.body)
        }
    }

    /// One streamed call's task and why it was cancelled (its deadline, its client). Thread-safe.
    private final class StreamControl: Sendable {
        private struct State {
            var task: Task<Void, Never>?
            var finished = false
            var clientGone = false
            var deadlinePassed = false
        }

        private let state = Mutex(State())

        // A task's cancellation runs its handlers' cancellation code at once: never under the lock.

        /// Keeps the call's task, unless it already finished.
        func attach(_ task: Task<Void, Never>) {
            let cancelNow = state.withLock { state -> Bool in
                guard !state.finished else { return false }
                state.task = task
                return state.clientGone
            }
            if cancelNow { task.cancel() }
        }

        /// The client went away.
        func cancel() {
            state.withLock { state in
                state.clientGone = true
                return state.task
            }?.cancel()
        }

        /// The deadline passed.
        func expire() {
            state.withLock { state -> Task<Void, Never>? in
                guard !state.finished else { return nil }
                state.deadlinePassed = true
                return state.task
            }?.cancel()
        }

        /// The call ended with `status`; returns the status to report: its deadline or its
        /// client's leaving when one of them cancelled it.
        func finish(_ status: RPCError?) -> RPCError? {
            let (deadlinePassed, clientGone) = state.withLock { state in
                state.finished = true
                state.task = nil
                return (state.deadlinePassed, state.clientGone)
            }
            if deadlinePassed { return RPCEdge.deadlinePassed }
            if clientGone, status?.code == .cancelled { return RPCEdge.clientCancelled }
            return status
        }
    }
}

extension Result {
    /// The error, if this is a failure.
    fileprivate var failedWith: Failure? {
        if case .failure(let error) = self { error } else { nil }
    }
}
