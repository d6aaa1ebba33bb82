/// How many messages flow each way in a call.
public enum MethodKind: String, Sendable, Codable, CaseIterable {
    /// One request, one response.
    case unary = "UNARY"
    /// One request, a stream of responses.
    case serverStreaming = "SERVER_STREAMING"
    /// A stream of requests, one response.
    case clientStreaming = "CLIENT_STREAMING"
    /// Streams both ways.
    case bidirectionalStreaming = "BIDI_STREAMING"

    /// Whether the client sends exactly one message.
    public var isUnaryRequest: Bool { self == .unary || self == .serverStreaming }
    /// Whether the server sends exactly one message.
    public var isUnaryResponse: Bool { self == .unary || self == .clientStreaming }
}

/// Who may call a method (API.md: "auth" column).
public enum AuthLevel: String, Sendable, Codable, CaseIterable {
    /// Anyone.
    case none = "NONE"
    /// A signed-in user, from `authorization: Bearer`.
    case user = "USER"
    /// A user token is optional: the method answers more when one is given.
    case optionalUser = "OPTIONAL_USER"
    /// The admin API key in `x-api-key`.
    case admin = "ADMIN"
    /// The internal service key in `x-api-key`; never routed by the gateway.
    case `internal` = "INTERNAL"
}

/// What is known about a method without its message types: the router, the gateway and
/// `Describe` work with this.
public struct MethodInfo: Sendable, Hashable {
    /// Fully qualified service name, e.g. `shop.catalog.v1.CatalogService`.
    public let service: String
    /// Method name, e.g. `GetProduct`.
    public let method: String
    /// Streaming kind.
    public let kind: MethodKind
    /// Who may call it.
    public let auth: AuthLevel
    /// Whether a retry after `UNAVAILABLE` is safe (gRFC A6).
    public let idempotent: Bool
    /// Field descriptions of the request message.
    public let requestFields: [FieldDescriptor]
    /// Field descriptions of the response message.
    public let responseFields: [FieldDescriptor]

    /// The HTTP/2 `:path`, `/<service>/<method>`; built once, since every call uses it.
    public let path: String

    /// Creates a description.
    public init(
        service: String, method: String, kind: MethodKind, auth: AuthLevel, idempotent: Bool,
        requestFields: [FieldDescriptor], responseFields: [FieldDescriptor]
    ) {
        self.service = service
        self.method = method
        self.path = "/\(service)/\(method)"
        self.kind = kind
        self.auth = auth
        self.idempotent = idempotent
        self.requestFields = requestFields
        self.responseFields = responseFields
    }
}

/// A method together with its request and response types: the single source both a server
/// and its clients compile against.
public struct MethodDescriptor<Request: RPCMessage, Response: RPCMessage>: Sendable {
    /// The untyped description.
    public let info: MethodInfo

    /// Describes a method; fields come from the message types.
    public init(
        service: String, method: String, kind: MethodKind, auth: AuthLevel = .none,
        idempotent: Bool = false
    ) {
        info = MethodInfo(
            service: service, method: method, kind: kind, auth: auth, idempotent: idempotent,
            requestFields: Request.fields, responseFields: Response.fields)
    }

    /// The HTTP/2 `:path`.
    public var path: String { info.path }
}
