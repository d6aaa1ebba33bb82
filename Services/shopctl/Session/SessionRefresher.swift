import Contracts
import Foundation
import RPC

/// Exchanges a refresh token for a new session: `RefreshSession` through the gateway in
/// shopctl, a fake in tests.
protocol SessionRenewing: Sendable {
    /// The new session for `refreshToken`, which the call rotates (uses up).
    func renew(refreshToken: String) async throws -> Session
}

/// Refreshes the stored session after an access token was refused as expired, at most once
/// across every shopctl process and task at a time.
///
/// Refresh tokens rotate on every use, and presenting a rotated one revokes the whole session
/// family (`REFRESH_TOKEN_REUSED`): two processes refreshing with the same token would sign
/// the user out. So a refresh holds the `flock` on `credentials.lock`, re-reads the file, and
/// only calls `RefreshSession` when the stored access token is still the one that failed;
/// otherwise another process refreshed first and its tokens are used.
struct SessionRefresher: Sendable {
    /// The credentials file.
    let store: CredentialsStore
    /// What calls `RefreshSession`.
    let renewer: any SessionRenewing
    /// The longest wait for another process's refresh.
    var lockTimeout: Duration = .seconds(30)

    /// Fresh credentials to retry with after `failedAccessToken` was refused as expired.
    /// - Throws: ``ShopctlError/sessionEnded`` when the refresh token is refused (the
    ///   credentials are deleted) or the credentials vanished meanwhile; the call's error when
    ///   the gateway could not be asked.
    func refresh(after failedAccessToken: String) async throws -> StoredCredentials {
        try await FileLock.withLock(store.lockFile, timeout: lockTimeout) {
            guard let current = try store.load() else { throw ShopctlError.sessionEnded }
            if current.accessToken != failedAccessToken { return current }
            let session: Session
            do {
                session = try await renewer.renew(refreshToken: current.refreshToken)
            } catch let error as RPCError where error.code == .unauthenticated {
                // INVALID_REFRESH_TOKEN or REFRESH_TOKEN_REUSED: the session is over for good.
                try store.delete()
                throw ShopctlError.sessionEnded
            }
            let renewed = StoredCredentials(session)
            try store.save(renewed)
            return renewed
        }
    }
}
