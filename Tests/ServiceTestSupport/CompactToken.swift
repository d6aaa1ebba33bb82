package import Credentials
import Crypto
package import CryptoExtras
package import Foundation

/// Hand-made compact JWTs: well-formed ones signed RS256 as the providers sign, and the
/// malformed or forged kinds no honest signer produces. Stateless.
package enum CompactToken {
    /// The token with `header` and `payload` (JSON texts) and the signature `sign` makes over
    /// the signing input.
    package static func make(header: String, payload: Data, sign: (Data) throws -> Data) rethrows -> String {
        let input = Base64URL.encode(Data(header.utf8)) + "." + Base64URL.encode(payload)
        return input + "." + Base64URL.encode(try sign(Data(input.utf8)))
    }

    /// An RS256 token carrying `claims`, signed by `key` and naming `kid`.
    package static func rs256(_ claims: some Encodable, key: _RSA.Signing.PrivateKey, kid: String) throws -> String {
        try make(header: #"{"alg":"RS256","kid":"\#(kid)","typ":"JWT"}"#, payload: try json(claims)) { input in
            try key.signature(for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5).rawRepresentation
        }
    }

    /// An HS256 token keyed with `secret`: the classic confusion attack when `secret` is a
    /// public key the verifier also knows.
    package static func hs256(_ payload: Data, secret: Data, kid: String) -> String {
        make(header: #"{"alg":"HS256","kid":"\#(kid)","typ":"JWT"}"#, payload: payload) { input in
            Data(HMAC<SHA256>.authenticationCode(for: input, using: SymmetricKey(data: secret)))
        }
    }

    /// An unsigned token (`alg: none`, empty signature).
    package static func unsigned(_ payload: Data, kid: String) -> String {
        make(header: #"{"alg":"none","kid":"\#(kid)","typ":"JWT"}"#, payload: payload) { _ in Data() }
    }

    /// The claims as compact JSON with sorted member names.
    package static func json(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }

    /// The decoded payload (second segment) of `token`, without verifying anything.
    package static func payload(of token: String) -> Data? {
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3 else { return nil }
        return Base64URL.decode(segments[1])
    }

    /// The access-token claims of `token`, read without verifying anything; nil when its
    /// payload is not access-token claims.
    package static func accessClaims(of token: String) -> AccessTokenClaims? {
        guard let payload = payload(of: token) else { return nil }
        return try? JSONDecoder().decode(AccessTokenClaims.self, from: payload)
    }

    /// The decoded JOSE header of `token`, without verifying anything.
    package static func header(of token: String) -> JOSEHeader? {
        guard let first = token.split(separator: ".").first, let data = Base64URL.decode(first) else { return nil }
        return try? JSONDecoder().decode(JOSEHeader.self, from: data)
    }
}

/// The members of a JOSE header the tests look at.
package struct JOSEHeader: Decodable, Sendable {
    /// The signature algorithm.
    package var alg: String
    /// The key id.
    package var kid: String?
    /// The media type, usually "JWT".
    package var typ: String?
}
