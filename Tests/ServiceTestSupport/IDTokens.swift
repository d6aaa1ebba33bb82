package import Credentials
package import CryptoExtras
import Foundation

/// Google and Apple ID tokens minted with ``IdentityProviderKeys``, with the claims auth-svc
/// is configured to accept (its client ids below) unless a test changes them. Stateless.
package enum IDTokens {
    /// Google's issuer as auth-svc is configured to accept it.
    package static let googleIssuer = "https://accounts.google.com"
    /// Apple's issuer.
    package static let appleIssuer = "https://appleid.apple.com"
    /// The Google client id auth-svc is configured with (`--google-client-id`).
    package static let googleClientID = "google-test-client"
    /// The Apple client id auth-svc is configured with (`--apple-client-id`).
    package static let appleClientID = "com.storefront.test"

    /// Google claims for `subject`, valid for ten minutes from now.
    package static func googleClaims(
        subject: String = "google-user-1", email: String? = "gina@example.com", emailVerified: Bool? = true
    ) -> IDTokenClaims {
        let now = Date()
        return IDTokenClaims(
            issuer: googleIssuer, subject: subject, audience: [googleClientID], expiresAt: now + 600,
            issuedAt: now - 5, email: email, emailVerified: emailVerified)
    }

    /// Apple claims for `subject` whose `nonce` is the hash of `rawNonce` (none when nil),
    /// valid for ten minutes from now.
    package static func appleClaims(
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
    package static func google(
        _ claims: IDTokenClaims = googleClaims(), key: _RSA.Signing.PrivateKey? = nil,
        kid: String = IdentityProviderKeys.googleKeyID
    ) throws -> String {
        try CompactToken.rs256(claims, key: key ?? IdentityProviderKeys.shared.get().google, kid: kid)
    }

    /// An Apple ID token carrying `claims`, signed by Apple's key (or `key`) under `kid`.
    package static func apple(
        _ claims: IDTokenClaims = appleClaims(), key: _RSA.Signing.PrivateKey? = nil,
        kid: String = IdentityProviderKeys.appleKeyID
    ) throws -> String {
        try CompactToken.rs256(claims, key: key ?? IdentityProviderKeys.shared.get().apple, kid: kid)
    }
}
