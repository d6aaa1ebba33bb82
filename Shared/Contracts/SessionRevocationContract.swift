public import RPC

/// `shop.auth.v1.SessionRevocationService`: the internal feed through which auth-svc tells every
/// other service which sessions were revoked, so their access tokens stop working within 60
/// seconds everywhere (API.md §3). Internal: callers present the internal API key.
public enum SessionRevocationContract {
    /// The fully qualified service name.
    public static let service = "shop.auth.v1.SessionRevocationService"

    /// `ListRevokedSessions`: the revocations after a sequence number, oldest first, from the
    /// retention window (revocations older than an access token's lifetime matter to nobody).
    public static let listRevokedSessions = MethodDescriptor<ListRevokedSessionsRequest, ListRevokedSessionsResponse>(
        service: service, method: "ListRevokedSessions", kind: .unary, auth: .internal, idempotent: true)

    /// Every method.
    public static let all: [MethodInfo] = [listRevokedSessions.info]
}

/// `{afterSequence?}`: the last sequence number the caller has seen; 0 (the default) for all.
public struct ListRevokedSessionsRequest: RPCMessage, Hashable {
    /// Only revocations with a greater sequence number are listed.
    public var afterSequence: Int

    /// Creates a request.
    public init(afterSequence: Int = 0) { self.afterSequence = afterSequence }

    /// Decodes a request, taking 0 for an absent `afterSequence`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        afterSequence = try container.decodeIfPresent(Int.self, forKey: .afterSequence) ?? 0
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("afterSequence", "Int", optional: true)]
}

/// `{revocations, lastSequence}`: what was revoked, and the sequence number to ask after next.
public struct ListRevokedSessionsResponse: RPCMessage, Hashable {
    /// The revocations, oldest first.
    public var revocations: [SessionRevocation]
    /// The greatest sequence number issued so far (the request's when nothing is new).
    public var lastSequence: Int

    /// Creates a response.
    public init(revocations: [SessionRevocation], lastSequence: Int) {
        self.revocations = revocations
        self.lastSequence = lastSequence
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [
        FieldDescriptor("revocations", "[SessionRevocation]"), FieldDescriptor("lastSequence", "Int"),
    ]
}

/// `{sessionId, revokedAt}`: one revoked session.
public struct SessionRevocation: RPCMessage, Hashable {
    /// The revoked session: the `sid` claim of its access tokens.
    public var sessionId: String
    /// When it was revoked (RFC 3339).
    public var revokedAt: String

    /// Creates a revocation.
    public init(sessionId: String, revokedAt: String) {
        self.sessionId = sessionId
        self.revokedAt = revokedAt
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("sessionId", "String"), FieldDescriptor("revokedAt", "String")]
}
