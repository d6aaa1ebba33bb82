package import CryptoExtras
package import Foundation
import Credentials

/// The RSA keys standing in for Google's and Apple's ID-token signing keys, plus one nobody
/// publishes: auth-svc reads the public halves from JWK Set files (`--google-jwks`,
/// `--apple-jwks`), and ``IDTokens`` signs with the private ones — no network.
///
/// RSA-2048 generation takes a noticeable moment, so the keys are made once per test process
/// (``shared``). Immutable; `Sendable`.
package struct IdentityProviderKeys: Sendable {
    /// The `kid` under which the Google key is published.
    package static let googleKeyID = "google-1"
    /// The `kid` under which the Apple key is published.
    package static let appleKeyID = "apple-1"

    /// Google's signing key.
    package let google: _RSA.Signing.PrivateKey
    /// Apple's signing key.
    package let apple: _RSA.Signing.PrivateKey
    /// A key that is in no published set: tokens it signs must be refused.
    package let stranger: _RSA.Signing.PrivateKey

    /// The keys of this test process, generated on first use.
    package static let shared = Result { try IdentityProviderKeys() }

    private init() throws {
        google = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        apple = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        stranger = try _RSA.Signing.PrivateKey(keySize: .bits2048)
    }

    /// Writes the JWK Sets auth-svc reads — Google's and Apple's public key, each under its
    /// `kid` — to `google-jwks.json` and `apple-jwks.json` in `directory`; returns the two files.
    package func writeKeySets(into directory: URL) throws -> (google: URL, apple: URL) {
        let google = directory.appendingPathComponent("google-jwks.json")
        let apple = directory.appendingPathComponent("apple-jwks.json")
        try JWKSet(keys: [try JWK(rsa: self.google.publicKey, kid: Self.googleKeyID)]).jsonData().write(to: google)
        try JWKSet(keys: [try JWK(rsa: self.apple.publicKey, kid: Self.appleKeyID)]).jsonData().write(to: apple)
        return (google, apple)
    }
}
