import Credentials
import CryptoExtras
import Foundation

/// Google and Apple ID tokens minted with ``ProviderKeys``, with the claims auth-svc is
/// configured to accept unless a test changes them. Stateless.
enum IDTokens {
    /// Google's issuer as auth-svc is configured to accept it.
    static let googleIssuer = "https://accounts.google.com"
    /// Apple's issuer.
    static let appleIssuer = "https://appleid.apple.com"
    /// The Google client id auth-svc is launched with (`--google-client-id`).
    static let googleClientID = "google-test-client"
    /// The Apple client id auth-svc is launched with (`--apple-client-id`).
    static let appleClientID = "com.storefront.test"

    /// Google claims for `subject`, valid for ten minutes from now.
    static func googleClaims(
        subject: String = "google-user-1", email: String? = "gina@example.com", emailVerified: Bool? = true
    ) -> IDTokenClaims {
        let now = Date()
        return IDTokenClaims(
            issuer: googleIssuer, subject: subject, audience: [googleClientID], expiresAt: now + 600,
            issuedAt: now - 5, email: email, emailVerified: emailVerified)
    }

    /// Apple claims for `subject` whose `nonce` is the hash of `rawNonce` (none when nil),
    /// valid for ten minutes from now.
    static func appleClaims(
        subject: String = "001234.apple-user", email: String? = "abc@privaterelay.appleid.com",
        rawNonce: String? = "raw-nonce-1", nonceSupported: Bool? = true
    ) -> IDTokenClaims {
        let now = Date()
        return IDTokenClaims(
            issuer: appleIssuer, subject: subject, audience: [appleClientID], expiresAt: now + 600,
            issuedAt: now - 5, email: email, emailVerified: true, nonce: rawNonce.map(AppleNonce.hash(rawNonce:)),
            nonceSupported: nonceSupported)
    }

    /// A Google ID token carrying `claims`, signed by Google's key (or `key`) under `kid`.
    static func google(
        _ claims: IDTokenClaims = googleClaims(), key: _RSA.Signing.PrivateKey? = nil,
        kid: String = ProviderKeys.googleKeyID
    ) throws -> String {
        try CompactToken.rs256(claims, key: key ?? ProviderKeys.shared.get().google, kid: kid)
    }

    /// An Apple ID token carrying `claims`, signed by Apple's key (or `key`) under `kid`.
    static func apple(
        _ claims: IDTokenClaims = appleClaims(), key: _RSA.Signing.PrivateKey? = nil,
        kid: String = ProviderKeys.appleKeyID
    ) throws -> String {
        try CompactToken.rs256(claims, key: key ?? ProviderKeys.shared.get().apple, kid: kid)
    }
}

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
        let keys = try ProviderKeys.shared.get()
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
                kid: ProviderKeys.googleKeyID)
        case .unsigned:
            return CompactToken.unsigned(try CompactToken.json(claims), kid: ProviderKeys.googleKeyID)
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
