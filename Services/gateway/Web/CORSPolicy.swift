import Foundation
import RPC

/// Cross-origin access for the origins given by `--cors-origin` (API.md §9; the Fetch
/// standard's CORS protocol): a preflight from an allowed origin is answered with the methods
/// and headers a Connect or gRPC-Web client sends, and every other answer to such an origin
/// names it and exposes the headers a script needs to read (statuses, reasons, the request
/// id). Other origins get no CORS headers, so a browser keeps their scripts out.
///
/// No `access-control-allow-credentials`: clients send their token in `authorization`, not in
/// cookies, so no request needs the browser's credentials. `*` among the origins allows every
/// origin (each answer still names the caller's).
struct CORSPolicy: Sendable {
    /// The allowed origins, lower case, without a trailing `/`.
    let origins: Set<String>
    /// Whether `*` was given.
    let allowsAnyOrigin: Bool

    init(origins: [String]) {
        let normalized = origins.map(Self.normalize)
        self.origins = Set(normalized)
        allowsAnyOrigin = normalized.contains("*")
    }

    /// What a preflight allows.
    static let allowedMethods = "GET, POST"
    static let allowedHeaders = [
        "content-type", "authorization", "connect-protocol-version", "connect-timeout-ms", "connect-content-encoding",
        "connect-accept-encoding", "x-grpc-web", "x-user-agent", "grpc-timeout", "x-api-key", "idempotency-key",
        "x-request-id", "traceparent", "tracestate",
    ].joined(separator: ", ")
    /// How long a browser may keep a preflight's answer (Chromium's cap).
    static let maxAge = "7200"
    /// What a script may read of an answer besides the safelisted headers.
    static let exposedHeaders = [
        "grpc-status", "grpc-message", "grpc-status-details-bin", RPCError.Trailer.reason, RPCError.Trailer.details,
        MetadataKey.requestID, "connect-content-encoding", "connect-accept-encoding",
    ].joined(separator: ", ")

    /// The headers of a `204` answering a preflight from an allowed origin; nil when `request`
    /// is no preflight (`OPTIONS` with `origin` and `access-control-request-method`) of an
    /// allowed origin.
    func preflight(_ request: WebRequest) -> WebHeaders? {
        guard request.method == "OPTIONS", request.headers["access-control-request-method"] != nil,
            let origin = allowedOrigin(of: request)
        else { return nil }
        return [
            "access-control-allow-origin": origin, "access-control-allow-methods": Self.allowedMethods,
            "access-control-allow-headers": Self.allowedHeaders, "access-control-max-age": Self.maxAge,
            "vary": "origin", "cache-control": "no-store",
        ]
    }

    /// `response`, adding the CORS headers every answer to an allowed origin carries, and
    /// `vary: origin` to every answer while any origin is allowed (a cache must not give one
    /// origin's answer, with or without CORS headers, to another). `response` itself when no
    /// origin is allowed.
    func decorate(_ response: any WebResponse, for request: WebRequest) -> any WebResponse {
        guard !origins.isEmpty else { return response }
        var added: WebHeaders = [:]
        if let origin = allowedOrigin(of: request) {
            added.add("access-control-allow-origin", origin)
            added.add("access-control-expose-headers", Self.exposedHeaders)
        }
        return CORSResponse(base: response, added: added)
    }

    /// The request's `origin` as sent, when it is allowed.
    private func allowedOrigin(of request: WebRequest) -> String? {
        guard let origin = request.headers["origin"] else { return nil }
        return allowsAnyOrigin || origins.contains(Self.normalize(origin)) ? origin : nil
    }

    /// An origin as compared: scheme and host are case-insensitive, and an origin has no path.
    private static func normalize(_ origin: String) -> String {
        var origin = origin.trimmingCharacters(in: .whitespaces).lowercased()
        while origin.hasSuffix("/") { origin.removeLast() }
        return origin
    }
}

/// A response that adds headers (and `origin` to `vary`) to its base's status line. Thread-safe
/// as its base is: it holds nothing mutable.
private final class CORSResponse: WebResponse {
    let base: any WebResponse
    let added: WebHeaders

    init(base: any WebResponse, added: WebHeaders) {
        self.base = base
        self.added = added
    }

    private func decorated(_ headers: WebHeaders) -> WebHeaders {
        var headers = headers
        for (name, value) in added { headers.add(name, value) }
        if let vary = headers["vary"] {
            if !vary.lowercased().contains("origin") { headers.set("vary", vary + ", origin") }
        } else {
            headers.add("vary", "origin")
        }
        return headers
    }

    func send(status: Int, headers: WebHeaders, body: Data) { base.send(status: status, headers: decorated(headers), body: body) }
    func start(status: Int, headers: WebHeaders) { base.start(status: status, headers: decorated(headers)) }
    func write(_ bytes: Data) async throws { try await base.write(bytes) }
    func end() { base.end() }
    func onCancel(_ action: @escaping @Sendable () -> Void) { base.onCancel(action) }
    var isCancelled: Bool { base.isCancelled }
    func setDeadline(_ deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) {
        base.setDeadline(deadline, action)
    }
    func noteCall(path: String, status: RPCError?, requestID: RequestID?) {
        base.noteCall(path: path, status: status, requestID: requestID)
    }
    func noteCallStarted(path: String, trace: TraceContext) { base.noteCallStarted(path: path, trace: trace) }
}
