import Crypto
import CryptoExtras
import Foundation

/// Hashes and verifies passwords with scrypt, stored as PHC strings:
/// `$scrypt$ln=17,r=8,p=1$<salt>$<hash>`, salt and hash in standard base64 without padding
/// (PHC string format, "B64" encoding).
///
/// Passwords are normalized to Unicode NFKC before hashing (NIST SP 800-63B §5.1.1.2), so the
/// same password typed on keyboards that compose "é" differently verifies. Each hash costs
/// about 128 MiB and half a second at the OWASP parameters: call it on a bounded worker pool,
/// never on an event loop or unbounded on the cooperative pool (DESIGN.md "Security").
/// Immutable value; thread-safe.
package struct PasswordHasher: Sendable {
    /// Why a password could not be hashed.
    package enum HashError: Error, Sendable, Hashable {
        /// The password is empty; the policy never lets one through.
        case emptyPassword
        /// scrypt failed, e.g. the memory could not be allocated.
        case derivationFailed
    }

    /// The salt length in bytes (128 bits).
    package static let saltLength = 16
    /// The derived hash length in bytes (256 bits).
    package static let hashLength = 32

    /// The parameters new hashes are made with; stored hashes below them need a rehash.
    package let parameters: ScryptParameters

    /// A well-formed hash at the current parameters that no password matches: verify against
    /// it when the account does not exist, so the answer takes as long as for a real account.
    ///
    /// Random salt and random "hash" bytes: no password derives to them except by a 2^-256
    /// chance, and making it costs nothing at start-up.
    package let dummyHash: String

    /// A hasher making new hashes with `parameters` (OWASP's unless told otherwise).
    package init(parameters: ScryptParameters = .owasp) {
        self.parameters = parameters
        var generator = SystemRandomNumberGenerator()
        let dummy = ScryptHash(
            parameters: parameters,
            salt: OpaqueToken.randomBytes(count: Self.saltLength, using: &generator),
            hash: OpaqueToken.randomBytes(count: Self.hashLength, using: &generator))
        self.dummyHash = dummy.phcString
    }

    /// The PHC string of `password` under a fresh random salt and the current parameters.
    package func hash(password: String) throws(HashError) -> String {
        let bytes = Self.normalizedBytes(of: password)
        guard !bytes.isEmpty else { throw .emptyPassword }
        var generator = SystemRandomNumberGenerator()
        let salt = OpaqueToken.randomBytes(count: Self.saltLength, using: &generator)
        guard let hash = Self.derive(bytes, salt: salt, parameters: parameters, length: Self.hashLength) else {
            throw .derivationFailed
        }
        return ScryptHash(parameters: parameters, salt: salt, hash: hash).phcString
    }

    /// Whether `password` matches the PHC string `storedHash`, and — only when it does —
    /// whether the hash was made with weaker parameters or shorter lengths than today's and
    /// should be replaced by `hash(password:)`.
    ///
    /// The hashes are compared in constant time. A stored string that is not a scrypt PHC
    /// string this hasher could have written never matches.
    package func verify(password: String, against storedHash: String) -> (valid: Bool, needsRehash: Bool) {
        guard let stored = ScryptHash(phcString: storedHash) else { return (false, false) }
        let bytes = Self.normalizedBytes(of: password)
        // An empty password still pays for one derivation so that it answers no sooner.
        let input = bytes.isEmpty ? [0] : bytes
        guard let derived = Self.derive(input, salt: stored.salt, parameters: stored.parameters, length: stored.hash.count)
        else { return (false, false) }
        let valid = ConstantTime.equals(derived, stored.hash) && !bytes.isEmpty
        guard valid else { return (false, false) }
        let needsRehash =
            stored.parameters.isWeaker(than: parameters) || stored.salt.count < Self.saltLength
            || stored.hash.count < Self.hashLength
        return (true, needsRehash)
    }

    /// The UTF-8 bytes of `password` in NFKC.
    static func normalizedBytes(of password: String) -> [UInt8] {
        Array(password.precomposedStringWithCompatibilityMapping.utf8)
    }

    /// scrypt of non-empty `password` and `salt`, `length` bytes long, or nil if it failed.
    private static func derive(_ password: [UInt8], salt: [UInt8], parameters: ScryptParameters, length: Int)
        -> [UInt8]?
    {
        guard let key = try? KDF.Scrypt.deriveKey(
            from: password, salt: salt, outputByteCount: length, rounds: parameters.rounds,
            blockSize: parameters.blockSize, parallelism: parameters.parallelism)
        else { return nil }
        return key.withUnsafeBytes { Array($0) }
    }
}
