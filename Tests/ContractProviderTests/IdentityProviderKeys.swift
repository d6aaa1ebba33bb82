@testable import auth_svc
import Credentials
import Crypto
import CryptoExtras
import Foundation

/// The RSA keys standing in for Google's and Apple's ID-token signing keys when auth-svc is a
/// provider: auth-svc reads their public halves from JWK Set files (as `--google-jwks` and
/// `--apple-jwks` point it to), and the provider states mint ID tokens with them — no network.
///
/// RSA-2048 generation takes a moment, so the keys are made once per test process
/// (``shared``). Immutable; `Sendable`.
struct IdentityProviderKeys: Sendable {
    /// The Google client id auth-svc accepts.
    static let googleClientID = "contract-google-client"
    /// The Apple client id auth-svc accepts.
    static let appleClientID = "com.storefront.contract"
    /// Google's issuer.
    static let googleIssuer = "https://accounts.google.com"
    /// Apple's issuer.
    static let appleIssuer = "https://appleid.apple.com"

    /// Google's key, published as `google-1`.
    let google: _RSA.Signing.PrivateKey
    /// Apple's key, published as `apple-1`.
    let apple: _RSA.Signing.PrivateKey

    /// The keys of this test process, made on first use.
    static let shared = Result { try IdentityProviderKeys() }

    private init() throws {
        google = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        apple = try _RSA.Signing.PrivateKey(keySize: .bits2048)
    }

    /// auth-svc's configuration of both providers, their JWK Sets written into `directory`.
    func configurations(writingKeySetsInto directory: URL) throws -> [ProviderConfiguration] {
        let googleKeys = directory.appendingPathComponent("google-jwks.json")
        let appleKeys = directory.appendingPathComponent("apple-jwks.json")
        try JWKSet(keys: [try JWK(rsa: google.publicKey, kid: "google-1")]).jsonData().write(to: googleKeys)
        try JWKSet(keys: [try JWK(rsa: apple.publicKey, kid: "apple-1")]).jsonData().write(to: appleKeys)
        return [
            .google(clientIDs: [Self.googleClientID], jwks: googleKeys.path),
            .apple(clientIDs: [Self.appleClientID], jwks: appleKeys.path),
        ]
    }

    /// A Google ID token for `subject` with a verified `email`, valid for ten minutes.
    func googleIDToken(subject: String, email: String) throws -> String {
        let now = Date()
        let claims = IDTokenClaims(
            issuer: Self.googleIssuer, subject: subject, audience: [Self.googleClientID], expiresAt: now + 600,
            issuedAt: now - 5, email: email, emailVerified: true)
        return try Self.rs256(claims, key: google, kid: "google-1")
    }

    /// An Apple ID token for `subject` whose nonce is the hash of `rawNonce`, valid for ten minutes.
    func appleIDToken(subject: String, email: String, rawNonce: String) throws -> String {
        let now = Date()
        let claims = IDTokenClaims(
            issuer: Self.appleIssuer, subject: subject, audience: [Self.appleClientID], expiresAt: now + 600,
            issuedAt: now - 5, email: email, emailVerified: true, nonce: AppleNonce.hash(rawNonce: rawNonce),
            nonceSupported: true)
        return try Self.rs256(claims, key: apple, kid: "apple-1")
    }

    /// A compact JWS of `claims`, signed RS256 by `key` as the providers sign.
    private static func rs256(_ claims: IDTokenClaims, key: _RSA.Signing.PrivateKey, kid: String) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let header = Data(#"{"alg":"RS256","kid":"\#(kid)","typ":"JWT"}"#.utf8)
        let input = Base64URL.encode(header) + "." + Base64URL.encode(try encoder.encode(claims))
        let signature = try key.signature(for: SHA256.hash(data: Data(input.utf8)), padding: .insecurePKCS1v1_5)
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }
}
