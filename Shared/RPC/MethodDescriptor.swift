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
    /// The description itself, shared by every copy: a call passes its method through several
    /// layers, and a copy of one reference costs one retain where seven fields cost five.
    private final class Storage: Sendable {
        let service: String
        let method: String
        let kind: MethodKind
        let auth: AuthLevel
        let idempotent: Bool
        let requestFields: [FieldDescriptor]
        let responseFields: [FieldDescriptor]
        let path: String

        init(
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

    private let storage: Storage

    /// Fully qualified service name, e.g. `shop.catalog.v1.CatalogService`.
    public var service: String { storage.service }
    /// Method name, e.g. `GetProduct`.
    public var method: String { storage.method }
    /// Streaming kind.
    public var kind: MethodKind { storage.kind }
    /// Who may call it.
    public var auth: AuthLevel { storage.auth }
    /// Whether a retry after `UNAVAILABLE` is safe (gRFC A6).
    public var idempotent: Bool { storage.idempotent }
    /// Field descriptions of the request message.
    public var requestFields: [FieldDescriptor] { storage.requestFields }
    /// Field descriptions of the response message.
    public var responseFields: [FieldDescriptor] { storage.responseFields }
    /// The HTTP/2 `:path`, `/<service>/<method>`; built once, since every call uses it.
    public var path: String { storage.path }

    /// Creates a description.
    public init(
        service: String, method: String, kind: MethodKind, auth: AuthLevel, idempotent: Bool,
        requestFields: [FieldDescriptor], responseFields: [FieldDescriptor]
    ) {
        storage = Storage(
            service: service, method: method, kind: kind, auth: auth, idempotent: idempotent,
            requestFields: requestFields, responseFields: responseFields)
    }

    /// Equal descriptions: the same one, or one with every field equal.
    public static func == (lhs: MethodInfo, rhs: MethodInfo) -> Bool {
        lhs.storage === rhs.storage
            || (lhs.service == rhs.service && lhs.method == rhs.method && lhs.kind == rhs.kind && lhs.auth == rhs.auth
                && lhs.idempotent == rhs.idempotent && lhs.requestFields == rhs.requestFields
                && lhs.responseFields == rhs.responseFields)
    }

    /// Hashes the path, which equal descriptions share.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(path)
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
