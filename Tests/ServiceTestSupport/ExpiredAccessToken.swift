package import Credentials
package import Foundation
import Testing

/// Access tokens as a session that sat idle would hold them: expired, yet signed with the
/// real key, so the gateway refuses them as `ACCESS_TOKEN_EXPIRED` rather than as forged.
package enum ExpiredAccessToken {
    /// `accessToken` re-signed with `key` after its expiry moved five minutes into the past
    /// (issued 20 minutes ago): exactly what a real token 15 minutes old would be.
    package static func forged(from accessToken: String, signedWith key: SigningKey) throws -> String {
        let segments = accessToken.split(separator: ".")
        let payload = try #require(segments.count == 3 ? Base64URL.decode(segments[1]) : nil, "not a JWT: \(accessToken)")
        var claims = try JSONDecoder().decode(AccessTokenClaims.self, from: payload)
        let now = Date()
        claims.issuedAt = now.addingTimeInterval(-1200)
        claims.expiresAt = now.addingTimeInterval(-300)
        return try JWTSigner(key: key).sign(claims)
    }

    /// The key auth-svc signs with, as it keeps it in its data directory
    /// (`<data-dir>/signing-key.json`, generated on its first start).
    package static func signingKey(ofAuthDataDirectory directory: URL) throws -> SigningKey {
        try SigningKey.load(from: directory.appendingPathComponent("signing-key.json").path)
    }
}
