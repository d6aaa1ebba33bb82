import Crypto
import CryptoExtras
import Foundation

/// A public key parsed from a JWK, bound to the one algorithm it may verify.
///
/// The binding is what stops algorithm confusion: a key is built for exactly one algorithm
/// from its `kty`/`crv` (and `alg` when present), and `isValidSignature` refuses any other, so
/// an RSA or Ed25519 public key can never be reused as, say, an HMAC secret.
struct VerificationKey: Sendable {
    /// The parsed key material.
    private enum Material: Sendable {
        case ed25519(Curve25519.Signing.PublicKey)
        case p256(P256.Signing.PublicKey)
        case rsa(_RSA.Signing.PublicKey)
    }

    /// The only algorithm this key verifies.
    let algorithm: JWSAlgorithm
    private let material: Material

    /// The key `jwk` describes, or nil when it is not a usable public signing key: another use
    /// than "sig", an unknown type, curve or algorithm, bad base64url, a point not on the curve,
    /// or an RSA modulus under 2048 bits.
    init?(_ jwk: JWK) {
        guard jwk.use == nil || jwk.use == "sig" else { return nil }
        switch (jwk.kty, jwk.crv) {
        case ("OKP", "Ed25519"):
            guard let x = jwk.x.flatMap(Base64URL.decode),
                let key = try? Curve25519.Signing.PublicKey(rawRepresentation: x)
            else { return nil }
            algorithm = .edDSA
            material = .ed25519(key)
        case ("EC", "P-256"):
            guard let x = jwk.x.flatMap(Base64URL.decode), let y = jwk.y.flatMap(Base64URL.decode),
                x.count == 32, y.count == 32,
                let key = try? P256.Signing.PublicKey(rawRepresentation: x + y)
            else { return nil }
            algorithm = .es256
            material = .p256(key)
        case ("RSA", nil):
            guard let n = jwk.n.flatMap(Base64URL.decode), let e = jwk.e.flatMap(Base64URL.decode),
                let key = try? _RSA.Signing.PublicKey(n: n, e: e)
            else { return nil }
            algorithm = .rs256
            material = .rsa(key)
        default:
            return nil
        }
        // A key that names its algorithm must name the one its type implies.
        if let alg = jwk.alg, alg != algorithm.rawValue {
            return nil
        }
    }

    /// Whether `signature` is a valid `algorithm` signature of `message` under this key;
    /// false for any algorithm other than the key's own.
    func isValidSignature(_ signature: Data, for message: Data, algorithm: JWSAlgorithm) -> Bool {
        guard algorithm == self.algorithm else { return false }
        switch material {
        case .ed25519(let key):
            return key.isValidSignature(signature, for: message)
        case .p256(let key):
            // JWS carries ECDSA signatures as the fixed-size r ‖ s (RFC 7518 §3.4), not DER.
            guard let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else {
                return false
            }
            return key.isValidSignature(parsed, for: message)
        case .rsa(let key):
            let parsed = _RSA.Signing.RSASignature(rawRepresentation: signature)
            return key.isValidSignature(parsed, for: SHA256.hash(data: message), padding: .insecurePKCS1v1_5)
        }
    }
}
