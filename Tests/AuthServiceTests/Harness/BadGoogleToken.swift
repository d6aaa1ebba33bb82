import Credentials
import CryptoExtras
import Foundation
import ServiceTestSupport

/// A way a Google ID token can be wrong; each must be refused with `INVALID_CREDENTIAL`.
enum BadGoogleToken: String, CaseIterable, Sendable, CustomStringConvertible {
    case wrongAudience = "an audience that is not our client id"
    case wrongIssuer = "an issuer that is not Google"
    case expired = "expired ten minutes ago"
    case unknownKeyID = "a kid that is not in Google's key set"
    case signedByAnotherKey = "a signature by a key Google never published"
    case hs256WithPublicKey = "HS256 keyed with Google's public key"
    case unsigned = "alg none"
    case notAJWT = "not a JWT at all"
    case tamperedPayload = "a payload changed after signing"

    var description: String { rawValue }

    /// The token itself.
    func token() throws -> String {
        let keys = try IdentityProviderKeys.shared.get()
        var claims = IDTokens.googleClaims()
        switch self {
        case .wrongAudience:
            claims.audience = ["someone-elses-client"]
            return try IDTokens.google(claims)
        case .wrongIssuer:
            claims.issuer = "https://accounts.evil.example"
            return try IDTokens.google(claims)
        case .expired:
            claims.expiresAt = Date() - 600
            claims.issuedAt = Date() - 4200
            return try IDTokens.google(claims)
        case .unknownKeyID:
            return try IDTokens.google(claims, kid: "google-9")
        case .signedByAnotherKey:
            return try IDTokens.google(claims, key: keys.stranger)
        case .hs256WithPublicKey:
            return CompactToken.hs256(
                try CompactToken.json(claims), secret: keys.google.publicKey.derRepresentation,
                kid: IdentityProviderKeys.googleKeyID)
        case .unsigned:
            return CompactToken.unsigned(try CompactToken.json(claims), kid: IdentityProviderKeys.googleKeyID)
        case .notAJWT:
            return "this-is-not-a-token"
        case .tamperedPayload:
            let genuine = try IDTokens.google(claims)
            var forged = claims
            forged.subject = "someone-else"
            let segments = genuine.split(separator: ".")
            return segments[0] + "." + Base64URL.encode(try CompactToken.json(forged)) + "." + segments[2]
        }
    }
}
