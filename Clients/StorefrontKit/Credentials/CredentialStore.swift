/// Where a ``StorefrontClient`` keeps the signed-in session between launches: the Keychain on
/// Apple platforms (`KeychainCredentialStore`), a file only its owner can read elsewhere
/// (``FileCredentialStore``), memory in tests and previews (``MemoryCredentialStore``).
///
/// The client reads the store when it is made — and again at its next calls while `load()`
/// throws (a Keychain before the device's first unlock) — and writes it on every sign-in,
/// refresh and sign-out; implementations must be thread-safe.
public protocol CredentialStore: Sendable {
    /// The stored session; nil when none is stored.
    func load() throws -> StoredSession?

    /// Stores `session`, replacing any stored one.
    func save(_ session: StoredSession) throws

    /// Removes the stored session; nothing happens when none is stored.
    func remove() throws
}
