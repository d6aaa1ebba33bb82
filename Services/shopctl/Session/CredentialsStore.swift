import Foundation
import RPC
import Synchronization

/// `credentials.json` in shopctl's config directory: loaded for every authenticated call,
/// replaced atomically with mode 0600 by sign-ins and refreshes, removed by sign-out or when
/// the session ends. Safe to use from several processes: a write is a rename, so readers see
/// whole files, and refreshes, sign-ins and sign-outs serialize on ``lockFile``.
///
/// Copies of a store share what it last read or wrote (``SessionInUse``): the session this
/// process's calls carry, which is the only one a failure of theirs may forget.
struct CredentialsStore: Sendable {
    /// Where the files are.
    let paths: ConfigPaths
    /// The refresh token of the session this store (or a copy) last read or wrote.
    private let inUse = SessionInUse()

    /// The store of the credentials in `paths`.
    init(paths: ConfigPaths) {
        self.paths = paths
    }

    /// The credentials file.
    var file: URL { paths.credentials }
    /// The lock file that serializes refreshes.
    var lockFile: URL { paths.credentialsLock }

    /// The stored credentials; nil when there are none. Their session becomes the one in use.
    func load() throws(ShopctlError) -> StoredCredentials? {
        let credentials = try read()
        inUse.note(credentials)
        return credentials
    }

    /// The stored credentials, without noting their session.
    private func read() throws(ShopctlError) -> StoredCredentials? {
        guard let data = try PrivateFile.read(file) else { return nil }
        do {
            return try JSONCodec.shared.decode(StoredCredentials.self, from: data)
        } catch {
            throw ShopctlError(
                .authentication, reason: "UNREADABLE_CREDENTIALS", "\(file.path) is not a credentials file.",
                hint: "run `shopctl auth login` to replace it")
        }
    }

    /// Replaces the stored credentials; their session becomes the one in use.
    func save(_ credentials: StoredCredentials) throws(ShopctlError) {
        let data: Data
        do {
            data = try JSONCodec.shared.encode(credentials)
        } catch {
            throw .local("Cannot encode the credentials: \(error.message)")
        }
        try PrivateFile.write(data, to: file)
        inUse.note(credentials)
    }

    /// Removes the stored credentials; nothing stored is fine.
    func delete() throws(ShopctlError) {
        try PrivateFile.remove(file)
    }

    /// Stores a new session (a sign-in) holding ``lockFile``, so that a refresh of the old one
    /// running in another process cannot save over it afterwards.
    func replaceSession(with credentials: StoredCredentials, lockTimeout: Duration = .seconds(30)) async throws {
        try await FileLock.withLock(lockFile, timeout: lockTimeout) { try save(credentials) }
    }

    /// Forgets the session (a sign-out, a deleted account) holding ``lockFile``, so that a
    /// refresh running in another process cannot bring the file back afterwards.
    func forgetSession(lockTimeout: Duration = .seconds(30)) async throws {
        try await FileLock.withLock(lockFile, timeout: lockTimeout) { try delete() }
    }

    /// Forgets the session in use — the one this store last read or wrote, which a call just
    /// found over — unless the file now holds another session: a sign-in meanwhile in another
    /// process, even by the same user, must survive. (Tokens rotate on every refresh, so a
    /// refresh by another process of this very session also keeps the file; the next call
    /// that carries it is refused in turn and forgets it then.) Holds ``lockFile``, as every
    /// change of the file does; nothing read means nothing to forget.
    func forgetSessionInUse(lockTimeout: Duration = .seconds(30)) async throws {
        guard let ended = inUse.refreshToken else { return }
        try await FileLock.withLock(lockFile, timeout: lockTimeout) {
            guard let current = try read(), current.refreshToken == ended else { return }
            try delete()
        }
    }

    /// Whether `error` says the stored session is over for good, so that its credentials are
    /// useless: `SESSION_REVOKED` (signed out elsewhere, a password change, a reset) or
    /// `SESSION_ENDED` (the refresh token was refused).
    static func endsSession(_ error: any Error) -> Bool {
        switch error {
        case let error as RPCError: error.code == .unauthenticated && error.reason == "SESSION_REVOKED"
        case let error as ShopctlError: error == .sessionEnded
        default: false
        }
    }
}

/// The refresh token of the session a ``CredentialsStore`` last read or wrote: it names the
/// session (a refresh rotates it, and this process saves the rotated one). Thread-safe: the
/// token is behind a `Mutex`.
final class SessionInUse: Sendable {
    private let token = Mutex<String?>(nil)

    /// An instance that has seen no session.
    init() {}

    /// The refresh token of the session in use; nil when none was read or written.
    var refreshToken: String? { token.withLock { $0 } }

    /// Makes `credentials`' session the one in use; nil (nothing stored) keeps the one before.
    func note(_ credentials: StoredCredentials?) {
        guard let credentials else { return }
        token.withLock { $0 = credentials.refreshToken }
    }
}
