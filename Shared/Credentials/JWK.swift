package import Crypto
package import CryptoExtras
package import Foundation

/// A public JSON Web Key (RFC 7517) as published by `GetJwks` and read from provider key sets.
///
/// Only the members for OKP/Ed25519 (RFC 8037 §2), EC/P-256 (RFC 7518 §6.2) and RSA
/// (RFC 7518 §6.3) public keys are modelled; other members of a provider's set (`x5c`, `x5t`)
/// are ignored when decoding, and absent optional members are left out when encoding.
/// Private members (`d`, `p`, …) are never read, so a key set cannot smuggle in a private key.
package struct JWK: Codable, Sendable, Hashable {
    /// The key type: "OKP", "EC" or "RSA".
    package var kty: String
    /// The intended use; "sig" for every key here. A key with another use never verifies.
    package var use: String?
    /// The algorithm the key is meant for; when present, a token must name exactly this one.
    package var alg: String?
    /// The key's identifier, matched against a token header's `kid`.
    package var kid: String?
    /// The curve of an OKP or EC key: "Ed25519" or "P-256".
    package var crv: String?
    /// The public key of an OKP key, or the x coordinate of an EC key (base64url).
    package var x: String?
    /// The y coordinate of an EC key (base64url).
    package var y: String?
    /// The modulus of an RSA key (base64url, unsigned big-endian).
    package var n: String?
    /// The public exponent of an RSA key (base64url, unsigned big-endian).
    package var e: String?

    /// A key from its members, exactly as given.
    package init(
        kty: String, use: String? = "sig", alg: String? = nil, kid: String? = nil, crv: String? = nil,
        x: String? = nil, y: String? = nil, n: String? = nil, e: String? = nil
    ) {
        self.kty = kty
        self.use = use
        self.alg = alg
        self.kid = kid
        self.crv = crv
        self.x = x
        self.y = y
        self.n = n
        self.e = e
    }

    /// The OKP key publishing an Ed25519 public key for EdDSA signatures.
    package init(ed25519 publicKey: Curve25519.Signing.PublicKey, kid: String?) {
        self.init(
            kty: "OKP", alg: JWSAlgorithm.edDSA.rawValue, kid: kid, crv: "Ed25519",
            x: Base64URL.encode(publicKey.rawRepresentation))
    }

    /// The EC key publishing a P-256 public key for ES256 signatures.
    package init(p256 publicKey: P256.Signing.PublicKey, kid: String?) {
        // The raw representation is the 32-byte x followed by the 32-byte y coordinate.
        let coordinates = Array(publicKey.rawRepresentation)
        self.init(
            kty: "EC", alg: JWSAlgorithm.es256.rawValue, kid: kid, crv: "P-256",
            x: Base64URL.encode(coordinates.prefix(32)), y: Base64URL.encode(coordinates.suffix(32)))
    }

    /// The RSA key publishing an RSA public key for RS256 signatures.
    package init(rsa publicKey: _RSA.Signing.PublicKey, kid: String?) throws {
        let primitives = try publicKey.getKeyPrimitives()
        self.init(
            kty: "RSA", alg: JWSAlgorithm.rs256.rawValue, kid: kid,
            n: Base64URL.encode(primitives.modulus), e: Base64URL.encode(primitives.publicExponent))
    }

    /// The RFC 7638 thumbprint: base64url of the SHA-256 of the key's required members in
    /// lexicographic order, or nil for a key type this package does not know.
    package var thumbprint: String? {
        let canonical: String
        switch kty {
        case "OKP":
            guard let crv, let x else { return nil }
            canonical = #"{"crv":"\#(crv)","kty":"OKP","x":"\#(x)"}"#
        case "EC":
            guard let crv, let x, let y else { return nil }
            canonical = #"{"crv":"\#(crv)","kty":"EC","x":"\#(x)","y":"\#(y)"}"#
        case "RSA":
            guard let e, let n else { return nil }
            canonical = #"{"e":"\#(e)","kty":"RSA","n":"\#(n)"}"#
        default:
            return nil
        }
        return Base64URL.encode(SHA256.hash(data: Array(canonical.utf8)))
    }
}

/// A JWK Set (RFC 7517 §5): the `{"keys": [...]}` document of `GetJwks` and of the provider
/// key files and URLs auth-svc is configured with.
package struct JWKSet: Codable, Sendable, Hashable {
    /// The keys, in publication order.
    package var keys: [JWK]

    /// A set of `keys`.
    package init(keys: [JWK]) {
        self.keys = keys
    }

    /// The set a JSON document describes; throws when it is not a JWK Set.
    package init(jsonData: Data) throws {
        self = try JSONDecoder().decode(JWKSet.self, from: jsonData)
    }

    /// The first key whose `kid` is `kid`, if any.
    package func key(withID kid: String) -> JWK? {
        keys.first { $0.kid == kid }
    }

    /// The set as compact JSON with sorted member names.
    package func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}
