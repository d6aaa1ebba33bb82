import Contracts
import Foundation
import RPC
import JSON

/// Connect's unary calls, JSON codec (connectrpc.com/docs/protocol, "Unary-Request" and
/// "Unary-Get-Request"): `POST` with `content-type: application/json` and the message as the
/// body, or `GET ?encoding=json&message=…` for methods without side effects. The answer is
/// the response message with 200, or a Connect error (``ConnectError``) with its code's HTTP
/// status and the reason also in the `shop-error-reason` header.
struct ConnectUnary {
    let edge: RPCEdge

    /// Serves a `POST` with a JSON body.
    func servePost(_ request: WebRequest, headers: RPCEdge.CallHeaders, route: RegisteredMethod?, response: any WebResponse) {
        let requestID = headers.requestID
        do throws(RPCError) {
            try Self.checkProtocolVersion(headers.connectProtocolVersion)
            if !request.body.isEmpty, let encoding = headers.contentEncoding, encoding.lowercased() != "identity" {
                throw RPCError.unsupportedEncoding(encoding, header: "content-encoding")
            }
            guard let route else { throw RPCError.unknownMethod(request.path) }
            guard route.info.kind == .unary else { return Self.refuseStreamingMethod(route.info, response: response) }
            let timeout = try Self.timeout(headers.connectTimeout)
            // An empty body is the empty message, as Connect clients send it.
            let message = request.body.isEmpty ? Data("{}".utf8) : request.body
            call(route, message: message, timeout: timeout, request: request, headers: headers, cache: nil, response: response)
        } catch {
            Self.fail(error, path: request.path, requestID: requestID, cache: nil, response: response)
        }
    }

    /// Serves a `GET` whose query carries the message.
    func serveGet(_ request: WebRequest, headers: RPCEdge.CallHeaders, route: RegisteredMethod?, response: any WebResponse) {
        let requestID = headers.requestID
        guard let route else {
            return Self.fail(RPCError.unknownMethod(request.path), path: request.path, requestID: requestID, cache: .private, response: response)
        }
        guard Self.allowsGet(route.info) else { return RPCEdge.refuseMethod(allowingGet: false, response: response) }
        let query = request.queryFields  // decoded once, not once per parameter
        let encoding = query["encoding"] ?? "json"
        guard encoding == "json" else {
            return RPCEdge.refuseContentType(
                "encoding '\(ClientInput.quoted(encoding))' is not supported here; use encoding=json.", response: response)
        }
        let cache = Self.cachePolicy(for: route.info, headers: headers)
        do throws(RPCError) {
            if let version = query["connect"], version != "v1" {
                throw RPCError(
                    code: .invalidArgument, reason: "UNSUPPORTED_PROTOCOL_VERSION",
                    message: "connect=\(ClientInput.quoted(version)) is not supported; use connect=v1.")
            }
            if let compression = query["compression"], !compression.isEmpty, compression != "identity" {
                throw RPCError.unsupportedEncoding(compression, header: "compression")
            }
            let timeout = try Self.timeout(headers.connectTimeout)
            var text = query["message"] ?? ""
            let message: Data
            if query["base64"] == "1" {
                // Form decoding turned a standard alphabet's `+` into a space; the URL-safe one has none.
                text = text.replacingOccurrences(of: " ", with: "+")
                do {
                    message = try GRPCWebText.decode(Data(text.utf8))
                } catch {
                    throw RPCError(code: .invalidArgument, reason: "MALFORMED_MESSAGE", message: "The message parameter is not valid base64.")
                }
            } else {
                message = Data(text.utf8)
            }
            call(
                route, message: message.isEmpty ? Data("{}".utf8) : message, timeout: timeout, request: request,
                headers: headers, cache: cache, response: response)
        } catch {
            Self.fail(error, path: route.info.path, requestID: requestID, cache: .private, response: response)
        }
    }

    private func call(
        _ route: RegisteredMethod, message: Data, timeout: Duration?, request: WebRequest, headers: RPCEdge.CallHeaders,
        cache: CachePolicy?, response: any WebResponse
    ) {
        let deadline = edge.deadline(for: route, timeout: timeout, request: request)
        let context = edge.context(for: route, over: .connect, request: request, headers: headers, deadline: deadline, response: response)
        let requestID = headers.requestID
        RPCEdge.runUnary(route, context: context, request: message, response: response) { result in
            Self.answer(result, requestID: requestID, cache: cache)
        }
    }

    // MARK: Answers

    /// The answer to a call: the message with 200, or the error with its status.
    static func answer(_ result: Result<Data, RPCError>, requestID: RequestID, cache: CachePolicy?) -> RPCEdge.Answer {
        var headers: WebHeaders = ["content-type": "application/json", MetadataKey.requestID: requestID.description]
        switch result {
        case .success(let message):
            cache?.add(to: &headers, success: true)
            return RPCEdge.Answer(status: 200, headers: headers, body: message)
        case .failure(let error):
            if let reason = error.reason { headers.add(RPCError.Trailer.reason, reason) }
            if let seconds = retryAfter(error) { headers.add("retry-after", String(seconds)) }
            cache?.add(to: &headers, success: false)
            return RPCEdge.Answer(status: status(of: error), headers: headers, body: ConnectError.body(error))
        }
    }

    /// The whole seconds a refused caller is told to wait (a rate limit's `retryAfterSeconds`
    /// detail), for HTTP's `Retry-After` beside the 429; nil when the error says none.
    static func retryAfter(_ error: RPCError) -> Int? {
        guard let seconds = error.details?["retryAfterSeconds"]?.numberValue, seconds >= 1, seconds <= 86_400 else { return nil }
        return Int(seconds.rounded(.up))
    }

    /// The HTTP status of an error: the spec's for its code, but 404 for an unknown method
    /// (what a Connect server's router answers, and what clients read as `unimplemented`).
    static func status(of error: RPCError) -> Int {
        error.code == .unimplemented && error.reason == "UNKNOWN_METHOD" ? 404 : ConnectError.httpStatus(of: error.code)
    }

    /// Answers `error` before any call ran.
    private static func fail(
        _ error: RPCError, path: String, requestID: RequestID, cache: CachePolicy?, response: any WebResponse
    ) {
        let answer = answer(.failure(error), requestID: requestID, cache: cache)
        response.noteCall(path: path, status: error, requestID: requestID)
        response.send(status: answer.status, headers: answer.headers, body: answer.body)
    }

    /// 415 for a streaming method asked as unary: it needs enveloped messages.
    static func refuseStreamingMethod(_ method: MethodInfo, response: any WebResponse) {
        RPCEdge.refuseContentType(
            "\(method.path) is a \(method.kind.rawValue.lowercased().replacingOccurrences(of: "_", with: "-")) method: "
                + "call it with application/connect+json (Connect streaming) or application/grpc-web+json.",
            response: response)
    }

    // MARK: Headers and query

    /// `connect-protocol-version`, when sent, must be `1`.
    static func checkProtocolVersion(_ version: String?) throws(RPCError) {
        guard let version, version != "1" else { return }
        throw RPCError(
            code: .invalidArgument, reason: "UNSUPPORTED_PROTOCOL_VERSION",
            message: "connect-protocol-version '\(ClientInput.quoted(version))' is not supported; send 1.")
    }

    /// `connect-timeout-ms`: 1 to 10 digits; nil when absent. Zero is a deadline already passed.
    static func timeout(_ text: String?) throws(RPCError) -> Duration? {
        guard let text else { return nil }
        guard (1...10).contains(text.utf8.count), text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let milliseconds = Int64(text) else {
            throw .malformedTimeout(text, header: "connect-timeout-ms", hint: ": send 1 to 10 digits of milliseconds")
        }
        return .milliseconds(milliseconds)
    }


    // MARK: GET and caching

    /// Whether `method` may be called with GET: a unary, idempotent method whose name starts
    /// with a read verb (AIP-131, 132: `Get…`, `List…`, `BatchGet…`, `Search…`; and health's
    /// `Check`, `Describe`). Idempotent alone is not enough: `AddFavorite` is idempotent and
    /// still changes something, which no link, prefetch or crawler may do.
    static func allowsGet(_ method: MethodInfo) -> Bool {
        method.kind == .unary && method.idempotent
            && readVerbs.contains { verb in method.method.utf8.starts(with: verb.utf8) }
    }

    private static let readVerbs = ["Get", "List", "BatchGet", "Search", "Check", "Describe"]

    /// The public catalog reads: the same answer for every anonymous caller, so a browser or a
    /// CDN may keep it for a minute.
    static let publicReads: Set<String> = [
        CatalogContract.getProduct.path, CatalogContract.listProducts.path, CatalogContract.batchGetProducts.path,
        CatalogContract.listCategories.path, StorefrontContract.getProductPage.path, StorefrontContract.getHome.path,
    ]

    /// How a GET's answer may be cached.
    enum CachePolicy: Equatable {
        /// `public, max-age=60` when it succeeds.
        case publicRead
        /// `private, no-store`.
        case `private`

        func add(to headers: inout WebHeaders, success: Bool) {
            headers.add("cache-control", self == .publicRead && success ? "public, max-age=60" : "private, no-store")
            // The answer depends on who asks: a cache must not hand an anonymous copy to a
            // signed-in caller or an admin, nor the other way round.
            headers.add("vary", "authorization, x-api-key")
        }
    }

    /// Public for the public catalog reads of a caller without credentials; private otherwise.
    static func cachePolicy(for method: MethodInfo, headers: RPCEdge.CallHeaders) -> CachePolicy {
        !headers.hasCredentials && publicReads.contains(method.path) ? .publicRead : .private
    }
}
