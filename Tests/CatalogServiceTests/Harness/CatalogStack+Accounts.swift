import Contracts
import Credentials
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// Accounts and access tokens, made through the real auth-svc of a ``CatalogStack``.
extension CatalogStack {
    /// A fresh verified account's session: SignUp, the verification email's token,
    /// VerifyEmail, then SignIn.
    func signedInUser(_ email: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Session {
        try await accounts().signedInUser(email, sourceLocation: sourceLocation)
    }

    /// A new session of an existing verified account.
    func signIn(_ email: String) async throws -> Session {
        try await accounts().signIn(email)
    }

    /// Signs `session` out through auth-svc with `scope`.
    func signOut(_ session: Session, scope: SignOutScope) async throws {
        _ = try await authClient.unary(
            AuthContract.signOut, SignOutRequest(scope: scope), options: bearer(session.accessToken))
    }

    /// The claims of `session`'s access token changed by `change`, signed with auth-svc's own
    /// key: a token whose signature is valid, so only the claims can make it fail.
    func resignedToken(_ session: Session, _ change: (inout AccessTokenClaims) -> Void) throws -> String {
        let segments = session.accessToken.split(separator: ".")
        guard segments.count == 3, let payload = Base64URL.decode(segments[1]) else {
            throw AccountError.unreadableAccessToken
        }
        var claims = try JSONDecoder().decode(AccessTokenClaims.self, from: payload)
        change(&claims)
        return try JWTSigner(key: try signingKey()).sign(claims)
    }
}

/// Why a test token could not be made.
enum AccountError: Error {
    /// A session's access token is not a readable JWT.
    case unreadableAccessToken
}
