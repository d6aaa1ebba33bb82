import Contracts
import Credentials
import Foundation
import ServiceKit

/// The key auth-svc signs access tokens with, and the public keys `GetJwks` publishes.
///
/// The signing key is read from its file, or generated (EdDSA) and saved there with mode 0600
/// on first start. To rotate: move the key file into `retired-signing-keys/` in the data
/// directory and restart; a new key is generated, and the retired one stays published (so
/// tokens it signed keep verifying) until it is removed, 15 minutes later at the earliest.
struct SigningKeys: Sendable {
    /// The key new tokens are signed with.
    let current: SigningKey
    /// Keys no longer used for signing whose tokens may still be live.
    let retired: [SigningKey]

    /// Loads (or creates) the keys described by `configuration`.
    static func load(_ configuration: AuthConfiguration) throws -> SigningKeys {
        let path = configuration.resolvedSigningKeyPath
        let current: SigningKey
        if FileManager.default.fileExists(atPath: path) {
            current = try SigningKey.load(from: path)
        } else {
            current = try SigningKey.generate(algorithm: .edDSA)
            try current.save(to: path)
        }
        let directory = configuration.retiredKeysDirectory
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            .filter { $0.hasSuffix(".json") }.sorted()
        let retired = try files.map { try SigningKey.load(from: "\(directory)/\($0)") }.filter { $0.kid != current.kid }
        return SigningKeys(current: current, retired: retired)
    }

    /// Every public key, current first, as `GetJwks` publishes them.
    var published: [Contracts.JWK] {
        ([current] + retired).map { key in
            let jwk = key.publicJWK
            return Contracts.JWK(
                kty: jwk.kty, kid: jwk.kid ?? key.kid, use: jwk.use, alg: jwk.alg, crv: jwk.crv, x: jwk.x, y: jwk.y)
        }
    }

    /// The same keys as a key source, for the service's own access-token checks.
    var keySource: KeySource {
        let set = JWKSet(keys: ([current] + retired).map(\.publicJWK))
        return KeySource { set }
    }
}

/// Revocation as auth-svc itself sees it: straight from the database, so a revoked session's
/// tokens stop working here at once. A session that no longer exists counts as revoked.
struct StoredSessionRevocations: RevocationChecker {
    /// The database.
    let store: AuthStore

    func isRevoked(sessionID: String) async throws -> Bool {
        guard let session = try await store.session(id: sessionID) else { return true }
        return session.revokedAt != nil
    }
}
