import Crypto
package import Foundation

/// A private key auth-svc signs access tokens with, and the `kid` under which its public half
/// is published in `GetJwks`.
///
/// Ed25519 (EdDSA) or P-256 (ES256). The `kid` of a generated key is the first 16 characters
/// of its RFC 7638 thumbprint, so it is stable across restarts and changes with the key.
/// Value type; `Sendable`, and safe to use from any thread.
package struct SigningKey: Sendable {
    /// The private key material.
    private enum Material: Sendable {
        case ed25519(Curve25519.Signing.PrivateKey)
        case p256(P256.Signing.PrivateKey)
    }

    /// Why a key could not be made or read.
    package enum KeyError: Error, Sendable, Hashable {
        /// Only EdDSA and ES256 keys sign here; RS256 is verify-only.
        case unsupportedAlgorithm(JWSAlgorithm)
        /// The private key bytes are not a valid key for the algorithm.
        case invalidKeyMaterial
        /// The key file is not a key file of this format; the path is included for the operator.
        case invalidKeyFile(path: String)
        /// A system call on the key file failed with this `errno`.
        case fileSystem(operation: String, path: String, errno: Int32)
    }

    /// The identifier published in the JWK and put into every token header.
    package let kid: String
    private let material: Material

    /// The algorithm this key signs with.
    package var algorithm: JWSAlgorithm {
        switch material {
        case .ed25519: .edDSA
        case .p256: .es256
        }
    }

    /// A freshly generated random key for `algorithm` (EdDSA unless told otherwise).
    package static func generate(algorithm: JWSAlgorithm = .edDSA) throws(KeyError) -> SigningKey {
        switch algorithm {
        case .edDSA: SigningKey(material: .ed25519(Curve25519.Signing.PrivateKey()), kid: nil)
        case .es256: SigningKey(material: .p256(P256.Signing.PrivateKey()), kid: nil)
        case .rs256: throw .unsupportedAlgorithm(algorithm)
        }
    }

    /// The key with raw private bytes `privateKey` (the 32-byte Ed25519 seed or P-256 scalar),
    /// published under `kid`, or under its thumbprint-derived `kid` when nil.
    package init(algorithm: JWSAlgorithm, privateKey: Data, kid: String? = nil) throws(KeyError) {
        let material: Material
        switch algorithm {
        case .edDSA:
            guard let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: privateKey) else {
                throw .invalidKeyMaterial
            }
            material = .ed25519(key)
        case .es256:
            guard let key = try? P256.Signing.PrivateKey(rawRepresentation: privateKey) else {
                throw .invalidKeyMaterial
            }
            material = .p256(key)
        case .rs256:
            throw .unsupportedAlgorithm(algorithm)
        }
        self.init(material: material, kid: kid)
    }

    private init(material: Material, kid: String?) {
        self.material = material
        let unnamed = Self.publicJWK(of: material, kid: nil)
        // The thumbprint of a key this package built always exists; the fallback is unreachable.
        self.kid = kid ?? String((unnamed.thumbprint ?? "key").prefix(16))
    }

    /// The raw private key bytes; secret — only for writing the key file.
    var privateKeyBytes: Data {
        switch material {
        case .ed25519(let key): key.rawRepresentation
        case .p256(let key): key.rawRepresentation
        }
    }

    /// The public key as the JWK that `GetJwks` publishes.
    package var publicJWK: JWK {
        Self.publicJWK(of: material, kid: kid)
    }

    /// The JWS signature of `message`: 64 bytes for both algorithms (ES256 as r ‖ s).
    func signature(for message: Data) throws -> Data {
        switch material {
        case .ed25519(let key): try key.signature(for: message)
        case .p256(let key): try key.signature(for: message).rawRepresentation
        }
    }

    private static func publicJWK(of material: Material, kid: String?) -> JWK {
        switch material {
        case .ed25519(let key): JWK(ed25519: key.publicKey, kid: kid)
        case .p256(let key): JWK(p256: key.publicKey, kid: kid)
        }
    }
}
