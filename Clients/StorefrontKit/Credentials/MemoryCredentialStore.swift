import RPC
import Synchronization

/// A ``CredentialStore`` in memory: the session lasts as long as the store — for tests,
/// previews, and apps that sign in on every launch. Thread-safe.
public final class MemoryCredentialStore: CredentialStore {
    private let session: PortableMutex<StoredSession?>

    /// A store holding `session` (none by default).
    public init(_ session: StoredSession? = nil) {
        self.session = PortableMutex(session)
    }

    /// The stored session.
    public func load() -> StoredSession? { session.withLock { $0 } }

    /// Stores `session`.
    public func save(_ session: StoredSession) { self.session.withLock { $0 = session } }

    /// Forgets the session.
    public func remove() { session.withLock { $0 = nil } }
}
