public import Contracts
internal import Credentials
public import RPC

/// The stable reasons ``APIKeyInterceptor`` answers with.
public enum APIKeyReason: String, ErrorReason {
    /// An admin or internal method was called without `x-api-key`.
    case missingAPIKey = "MISSING_API_KEY"
    /// The `x-api-key` is not the key this method requires.
    case invalidAPIKey = "INVALID_API_KEY"

    /// The gRPC status code this reason is sent with.
    public var code: RPCCode {
        switch self {
        case .missingAPIKey: .unauthenticated
        case .invalidAPIKey: .permissionDenied
        }
    }
}

/// Guards methods with auth `admin` and `internal` by the `x-api-key` metadata (API.md §1,
/// DESIGN.md "Security"); other methods are untouched.
///
/// Admin methods need the admin key, internal methods the internal key; neither key opens the
/// other's methods. A method whose key is not configured refuses every call. Keys are compared
/// in constant time and never logged. Immutable; `Sendable`.
public struct APIKeyInterceptor: ImmediateServerInterceptor {
    /// The key of `admin` methods, or nil when this service has none.
    private let adminKey: String?
    /// The key of `internal` methods, or nil when this service has none.
    private let internalKey: String?

    /// An interceptor that accepts `adminKey` on admin methods and `internalKey` on internal
    /// ones; an empty key counts as none.
    public init(adminKey: String?, internalKey: String?) {
        self.adminKey = adminKey.flatMap { $0.isEmpty ? nil : $0 }
        self.internalKey = internalKey.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Only admin and internal methods are guarded.
    public func applies(to method: MethodInfo) -> Bool { method.auth == .admin || method.auth == .internal }

    /// Throws UNAUTHENTICATED `MISSING_API_KEY` or PERMISSION_DENIED `INVALID_API_KEY` unless
    /// the call carries the key its method requires.
    public func prepareImmediately(_ context: inout ServerContext) throws {
        let expected: String?
        switch context.method.auth {
        case .admin: expected = adminKey
        case .internal: expected = internalKey
        case .none, .user, .optionalUser: return
        }
        guard let presented = context.metadata[MetadataKey.apiKey], !presented.isEmpty else {
            throw APIKeyReason.missingAPIKey.error("This method needs an x-api-key.")
        }
        // Compare even when no key is configured, so the answer takes the same time either way.
        let matches = ConstantTime.equals(presented, expected ?? "")
        guard matches, expected != nil else {
            throw APIKeyReason.invalidAPIKey.error("The x-api-key is not valid for this method.")
        }
    }
}
