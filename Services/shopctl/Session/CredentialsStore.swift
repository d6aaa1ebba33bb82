import Foundation
import RPC

/// `credentials.json` in shopctl's config directory: loaded for every authenticated call,
/// replaced atomically with mode 0600 by sign-ins and refreshes, removed by sign-out or when
/// the session ends. Safe to use from several processes: a write is a rename, so readers see
/// whole files, and refreshes, sign-ins and sign-outs serialize on ``lockFile``.
struct CredentialsStore: Sendable {
    /// Where the files are.
    let paths: ConfigPaths

    /// The credentials file.
    var file: URL { paths.credentials }
    /// The lock file that serializes refreshes.
    var lockFile: URL { paths.credentialsLock }

    /// The stored credentials; nil when there are none.
    func load() throws(ShopctlError) -> StoredCredentials? {
        guard let data = try PrivateFile.read(file) else { return nil }
        do {
            return try JSONCodec.shared.decode(StoredCredentials.self, from: data)
        } catch {
            throw ShopctlError(
                .authentication, reason: "UNREADABLE_CREDENTIALS", "\(file.path) is not a credentials file.",
                hint: "run `shopctl auth login` to replace it")
        }
    }

    /// Replaces the stored credentials.
    func save(_ credentials: StoredCredentials) throws(ShopctlError) {
        let data: Data
        do {
            data = try JSONCodec.shared.encode(credentials)
        } catch {
            throw .local("Cannot encode the credentials: \(error.message)")
        }
        try PrivateFile.write(data, to: file)
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

    /// Forgets the session `signedIn` belongs to, after the server said it ended — unless the
    /// file now holds another user's session (a sign-in meanwhile, in another process, which
    /// must survive). Holds ``lockFile``, as every change of the file does.
    func forgetSession(of signedIn: StoredCredentials, lockTimeout: Duration = .seconds(30)) async throws {
        try await FileLock.withLock(lockFile, timeout: lockTimeout) {
            guard let current = try load(), current.userId == signedIn.userId else { return }
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
