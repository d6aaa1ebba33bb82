internal import Contracts
import Credentials
internal import Foundation

/// Mints what a sign-in answers with: a signed access token (API.md claims, 15 minutes) and
/// an opaque refresh token, whose hash alone is stored.
struct SessionIssuer: Sendable {
    /// Signs access tokens with the service's key (`kid` in the header).
    let signer: JWTSigner
    /// The `iss` claim.
    let issuer: String
    /// The `aud` claim.
    let audience: String
    /// How long an access token is valid.
    let lifetime: TimeInterval = AccessTokenClaims.defaultLifetime

    /// A new refresh token and the hash to store for it.
    func newRefreshToken() -> (token: String, hash: String) {
        let token = OpaqueToken.generate()
        return (token, OpaqueToken.hash(token))
    }

    /// The `Session` message for `user` in `sessionID`, carrying `refreshToken`.
    func session(for user: UserRecord, sessionID: String, refreshToken: String, now: Date = Date()) throws -> Session {
        let claims = AccessTokenClaims(
            issuer: issuer, subject: user.id, audience: audience, sessionID: sessionID, email: user.email,
            emailVerified: user.emailVerified, issuedAt: now, lifetime: lifetime)
        return Session(
            accessToken: try signer.sign(claims), refreshToken: refreshToken, expiresIn: Int(lifetime),
            user: user.message)
    }
}
