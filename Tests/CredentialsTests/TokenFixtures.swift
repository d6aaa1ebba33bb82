import Credentials
import Crypto
import CryptoExtras
import Foundation
import Testing

/// Keys, clocks and hand-made tokens shared by the JWT tests; everything is built in memory.
enum TokenFixtures {
    /// The fixed "now" every verification in the tests uses.
    static let now = Date(timeIntervalSince1970: 1_750_000_000)
    /// auth-svc's issuer in the tests.
    static let issuer = "https://auth.storefront.test"
    /// The access-token audience in the tests.
    static let audience = "storefront"
    /// Apple's issuer.
    static let appleIssuer = "https://appleid.apple.com"
    /// The app's client id at Apple.
    static let appleClientID = "com.example.storefront"

    /// One RSA key for the provider, generated once per test run (2048-bit generation is slow).
    static let providerRSA = Result { try _RSA.Signing.PrivateKey(keySize: .bits2048) }
    /// A second, unrelated RSA key.
    static let otherRSA = Result { try _RSA.Signing.PrivateKey(keySize: .bits2048) }

    /// Access-token claims valid at `now`, signed 60 s earlier.
    static func accessClaims(type: String? = AccessTokenClaims.accessType) -> AccessTokenClaims {
        AccessTokenClaims(
            issuer: issuer, subject: "user-1", audience: audience, expiresAt: now + 840, issuedAt: now - 60,
            sessionID: "session-1", email: "alice@example.com", emailVerified: true, type: type)
    }

    /// A verifier for access tokens signed by `keys`.
    static func accessVerifier(_ keys: [SigningKey]) -> JWTVerifier {
        JWTVerifier.accessTokens(keys: JWKSet(keys: keys.map(\.publicJWK)), issuer: issuer, audience: audience)
    }

    /// A compact token from a raw header and payload JSON, signed by `sign` over the signing
    /// input — for tokens no well-behaved signer would make.
    static func compact(header: String, payload: String, sign: (Data) throws -> Data) rethrows -> String {
        let input = Base64URL.encode(Data(header.utf8)) + "." + Base64URL.encode(Data(payload.utf8))
        return input + "." + Base64URL.encode(try sign(Data(input.utf8)))
    }

    /// The JSON text of `value` with sorted keys.
    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// An RS256 (PKCS #1 v1.5, SHA-256) signature, as Google and Apple make them.
    static func rs256(_ key: _RSA.Signing.PrivateKey) -> (Data) throws -> Data {
        { data in
            try key.signature(for: SHA256.hash(data: data), padding: .insecurePKCS1v1_5).rawRepresentation
        }
    }

    /// An HS256 signature keyed with `secret`.
    static func hs256(secret: Data) -> (Data) -> Data {
        { data in Data(HMAC<SHA256>.authenticationCode(for: data, using: SymmetricKey(data: secret))) }
    }

    /// The JWK publishing `key`'s public half under `kid`.
    static func rsaJWK(_ key: _RSA.Signing.PrivateKey, kid: String) throws -> JWK {
        try JWK(rsa: key.publicKey, kid: kid)
    }

    /// Apple-style ID-token claims valid at `now`.
    static func appleClaims(nonce: String? = nil, nonceSupported: Bool? = nil) -> IDTokenClaims {
        IDTokenClaims(
            issuer: appleIssuer, subject: "001234.abcdef", audience: [appleClientID], expiresAt: now + 600,
            issuedAt: now - 10, email: "alice@privaterelay.appleid.com", emailVerified: true, nonce: nonce,
            nonceSupported: nonceSupported)
    }

    /// A verifier for Apple ID tokens signed by the keys in `keys`.
    static func appleVerifier(_ keys: [JWK]) -> JWTVerifier {
        JWTVerifier.idTokens(keys: JWKSet(keys: keys), issuers: [appleIssuer], audiences: [appleClientID])
    }

    /// The error `body` throws, or nil when it returns normally.
    static func tokenError<T>(_ body: () throws(TokenError) -> T) -> TokenError? {
        do {
            _ = try body()
            return nil
        } catch {
            return error
        }
    }
}
