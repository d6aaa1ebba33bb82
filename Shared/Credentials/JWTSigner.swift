import Foundation

/// Signs JWTs — auth-svc's access tokens — with one `SigningKey`.
///
/// The header is `{"alg": <key's algorithm>, "kid": <key's kid>, "typ": "JWT"}`; the payload is
/// the claims as compact JSON with sorted member names. Value type; thread-safe.
package struct JWTSigner: Sendable {
    /// The key every token is signed with.
    package let key: SigningKey

    /// A signer using `key`.
    package init(key: SigningKey) {
        self.key = key
    }

    /// The compact JWT carrying `claims`; throws if the claims cannot be encoded as JSON or
    /// the signature cannot be made.
    package func sign(_ claims: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let payload = try encoder.encode(claims)
        let header = JWSHeader(alg: key.algorithm.rawValue, kid: key.kid)
        return try CompactJWS.serialize(header: header, payload: payload) { try key.signature(for: $0) }
    }
}

/// A JWS in compact serialization (RFC 7515 §7.1), split and decoded but not yet verified:
/// `BASE64URL(header) . BASE64URL(payload) . BASE64URL(signature)`.
struct CompactJWS: Sendable {
    /// The longest token accepted, in bytes: far above any real access or ID token (1–2 KiB),
    /// low enough that a hostile one costs little to refuse.
    static let maximumLength = 16 * 1024
    /// The longest `kid` accepted; real ones are under 64 characters.
    static let maximumKeyIDLength = 256

    /// The decoded JOSE header.
    let header: JWSHeader
    /// The decoded payload bytes (JSON claims for a JWT).
    let payload: Data
    /// The decoded signature bytes.
    let signature: Data
    /// The bytes the signature covers: the first two segments as sent, with the dot.
    let signingInput: Data

    /// Splits and decodes `token`; throws `.malformed` unless it has exactly three segments of
    /// canonical base64url, a JSON-object header with a string `alg`, a printable `kid` when
    /// present, and no `crit` (no extension is understood here, RFC 7515 §4.1.11).
    init(parsing token: String) throws(TokenError) {
        let bytes = Array(token.utf8)
        guard bytes.count <= Self.maximumLength else { throw .malformed }
        let segments = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard segments.count == 3, !segments[0].isEmpty, !segments[1].isEmpty,
            let headerBytes = Base64Alphabet.url.decode(String(decoding: segments[0], as: UTF8.self)),
            let payload = Base64Alphabet.url.decode(String(decoding: segments[1], as: UTF8.self)),
            let signature = Base64Alphabet.url.decode(String(decoding: segments[2], as: UTF8.self)),
            let header = try? JSONDecoder().decode(JWSHeader.self, from: Data(headerBytes)),
            header.crit == nil
        else { throw .malformed }
        if let kid = header.kid {
            let printable = kid.utf8.allSatisfy { (0x20...0x7E).contains($0) }
            guard !kid.isEmpty, kid.utf8.count <= Self.maximumKeyIDLength, printable else { throw .malformed }
        }
        self.header = header
        self.payload = Data(payload)
        self.signature = Data(signature)
        self.signingInput = Data(segments[0] + [UInt8(ascii: ".")] + segments[1])
    }

    /// The compact serialization of `header` and `payload`, signed by `sign` over the
    /// signing input.
    static func serialize(header: JWSHeader, payload: Data, sign: (Data) throws -> Data) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let signingInput = Base64URL.encode(try encoder.encode(header)) + "." + Base64URL.encode(payload)
        let signature = try sign(Data(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature)
    }
}
