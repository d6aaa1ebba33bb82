import Credentials
import Crypto
import CryptoExtras
import Foundation

/// RSA keys standing in for Google's and Apple's, RS256 ID tokens signed with them, and JWK
/// Set files for `ProviderConfiguration.jwks` — all made by the tests themselves.
///
/// The keys are generated once per test process (RSA-2048 generation is slow) and never
/// change; everything else is built per test. Thread-safe.
enum ProviderTokens {
    /// The key published under `kid` "key-1".
    static let firstKey = Result { try _RSA.Signing.PrivateKey(keySize: .bits2048) }
    /// The key rotated in later, under `kid` "key-2".
    static let secondKey = Result { try _RSA.Signing.PrivateKey(keySize: .bits2048) }
    /// A key no JWK Set publishes.
    static let strangerKey = Result { try _RSA.Signing.PrivateKey(keySize: .bits2048) }

    /// Google's client id for this app in the tests.
    static let googleClientID = "web-client.apps.googleusercontent.com"
    /// Apple's client id (the services id) for this app in the tests.
    static let appleClientID = "com.example.storefront"

    /// Claims valid for the next ten minutes, from `issuer` to `audience`.
    static func claims(
        issuer: String = "https://accounts.google.com", audience: String = googleClientID,
        expiresAt: Date = Date() + 600, nonce: String? = nil, nonceSupported: Bool? = nil
    ) -> IDTokenClaims {
        IDTokenClaims(
            issuer: issuer, subject: "provider-user-1", audience: [audience], expiresAt: expiresAt,
            issuedAt: Date() - 30, email: "ada@example.com", emailVerified: true, nonce: nonce,
            nonceSupported: nonceSupported)
    }

    /// The compact RS256 token of `claims`, signed PKCS #1 v1.5 as the providers sign, naming `kid`.
    static func sign(_ claims: IDTokenClaims, with key: _RSA.Signing.PrivateKey, kid: String) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let header = Base64URL.encode(Data(#"{"alg":"RS256","kid":"\#(kid)","typ":"JWT"}"#.utf8))
        let signingInput = header + "." + Base64URL.encode(try encoder.encode(claims))
        let signature = try key.signature(for: SHA256.hash(data: Data(signingInput.utf8)), padding: .insecurePKCS1v1_5)
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }
}

/// A temporary directory holding `jwks.json`, the file a provider configuration points at.
/// Removed by `remove()`; one per test, so tests never share a key set.
struct KeySetDirectory {
    /// The directory's path.
    let path: String

    /// The key-set file's path.
    var file: String { path + "/jwks.json" }

    /// Creates an empty directory under the system's temporary directory.
    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("authunit-jwks-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// Publishes the public halves of `keys` (with their `kid`s) as the JWK Set, replacing the file.
    func publish(_ keys: [(key: _RSA.Signing.PrivateKey, kid: String)]) throws {
        let set = JWKSet(keys: try keys.map { try JWK(rsa: $0.key.publicKey, kid: $0.kid) })
        try set.jsonData().write(to: URL(fileURLWithPath: file), options: .atomic)
    }

    /// Deletes the directory and its contents.
    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
