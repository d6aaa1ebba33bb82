internal import Contracts
public import RPC

/// Authenticates the callers of user methods: the first interceptor of every service router
/// that serves methods with auth `user` or `optionalUser` (API.md §3, DESIGN.md "Security").
///
/// - `user`: the call must carry a valid `authorization: Bearer <accessToken>`; otherwise it
///   ends with UNAUTHENTICATED and one of `MISSING_TOKEN`, `INVALID_ACCESS_TOKEN`,
///   `ACCESS_TOKEN_EXPIRED` (or UNAVAILABLE when no keys can be had).
/// - `optionalUser`: a call without a Bearer token goes through anonymous; a call with one
///   must verify, so a bad or expired token is refused rather than silently ignored.
/// - `none`, `admin`, `internal`: untouched; ``APIKeyInterceptor`` guards the latter two.
///
/// The caller is stored under ``AuthenticatedUserKey`` and read with `context.user` or
/// `context.requireUser()`. Immutable; `Sendable`.
package struct AuthenticationInterceptor: ServerInterceptor {
    /// Checks the tokens.
    package let verifier: AccessTokenVerifier

    /// An interceptor that checks tokens with `verifier`.
    package init(verifier: AccessTokenVerifier) {
        self.verifier = verifier
    }

    /// Only user and optional-user methods carry tokens to check.
    package func applies(to method: MethodInfo) -> Bool { method.auth == .user || method.auth == .optionalUser }

    /// Attaches the caller to `context`, or throws the error the call ends with.
    package func prepare(_ context: inout ServerContext) async throws {
        let header = context.metadata[MetadataKey.authorization]
        switch context.method.auth {
        case .user:
            context.attributes[AuthenticatedUserKey.self] = try await verifier.authenticate(authorization: header)
        case .optionalUser:
            guard let token = AccessTokenVerifier.bearerToken(in: header) else { return }
            context.attributes[AuthenticatedUserKey.self] = try await verifier.authenticate(token: token)
        case .none, .admin, .internal:
            return
        }
    }
}


/// The signed-in user of a call, read from a verified access token (API.md §3 "Access tokens").
///
/// Only what the token itself says: services look up anything else by `id`. Immutable value;
/// `Sendable`.
public struct AuthenticatedUser: Sendable, Hashable {
    /// The user id, the token's `sub`.
    public let id: String
    /// The session the token belongs to, the token's `sid`.
    public let sessionID: String
    /// The user's email address when the token was signed.
    public let email: String
    /// Whether that address was verified when the token was signed.
    public let emailVerified: Bool

    /// A user with every member given.
    public init(id: String, sessionID: String, email: String, emailVerified: Bool) {
        self.id = id
        self.sessionID = sessionID
        self.email = email
        self.emailVerified = emailVerified
    }
}

/// The ``Attributes`` key under which ``AuthenticationInterceptor`` stores the caller.
public enum AuthenticatedUserKey: AttributeKey {
    /// The stored type.
    public typealias Value = AuthenticatedUser
}

extension ServerContext {
    /// The signed-in caller, or nil for an anonymous call (methods with auth `none` or
    /// `optionalUser` without a token).
    public var user: AuthenticatedUser? {
        attributes[AuthenticatedUserKey.self]
    }

    /// The signed-in caller; throws UNAUTHENTICATED `MISSING_TOKEN` when the call has none, so
    /// a handler that needs a user can never serve an anonymous call by mistake.
    public func requireUser() throws -> AuthenticatedUser {
        guard let user else {
            throw AuthReason.missingToken.error("This method needs a signed-in user.")
        }
        return user
    }
}
