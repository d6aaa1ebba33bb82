import Contracts
import Foundation
import RPC

/// Keeps the signed-in session: the tokens in memory and in the ``CredentialStore``, the
/// access token handed to each call, and its refresh — once for every call waiting on it.
///
/// An access token near its expiry (or one the server refused as expired) is exchanged with
/// `RefreshSession` by one task; every call that needs a token meanwhile awaits that task, so
/// twenty calls at the moment of expiry make one refresh. A refresh the server refuses as
/// unauthenticated (`REFRESH_TOKEN_REUSED`: someone else used it, the whole session family is
/// revoked; `INVALID_REFRESH_TOKEN`) ends the session here too: the store is cleared and
/// ``AuthStateBroadcast`` tells `stateChanges` `nil`.
///
/// An actor: the session and the refresh under way change only on it.
actor SessionKeeper {
    /// Exchanges a refresh token for a new session (`RefreshSession`).
    typealias Refresher = @Sendable (_ refreshToken: String) async throws -> Session

    private let store: any CredentialStore
    private let refresher: Refresher
    private let broadcast: AuthStateBroadcast
    /// How long before its expiry an access token is refreshed.
    private let refreshMargin: TimeInterval
    private let now: @Sendable () -> Date
    private var session: StoredSession?
    /// The refresh under way; every caller needing a token awaits it.
    private var refreshing: (id: UUID, task: Task<StoredSession?, any Error>)?

    /// A keeper of the session `store` holds (read now; a store that cannot be read counts as
    /// signed out until a later call can read it), refreshing through `refresher`, telling
    /// `broadcast` who is signed in.
    init(
        store: any CredentialStore, refresher: @escaping Refresher, broadcast: AuthStateBroadcast,
        refreshMargin: TimeInterval = 60, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.store = store
        self.refresher = refresher
        self.broadcast = broadcast
        self.refreshMargin = refreshMargin
        self.now = now
        do {
            session = try store.load()
        } catch {
            session = nil
            storeUnread = true
        }
        broadcast.publish(session?.user)
    }

    /// Whether the store could not be read yet (a Keychain before the device's first unlock,
    /// say): until it can, the keeper counts as signed out and tries again at each call.
    private var storeUnread = false

    /// Reads the store again if it could not be read before; a session found there becomes the
    /// signed-in one.
    private func readStoreIfUnread() {
        guard storeUnread else { return }
        let loaded: StoredSession?
        do { loaded = try store.load() } catch { return }
        storeUnread = false
        guard let loaded, session == nil else { return }
        session = loaded
        broadcast.publish(loaded.user)
    }

    /// The stored session, as it is now (no refresh).
    var current: StoredSession? {
        readStoreIfUnread()
        return session
    }

    /// The access token for a call: the current one, or a new one first when it is about to
    /// expire; nil when signed out.
    func accessToken() async throws -> String? {
        readStoreIfUnread()
        guard let session else { return nil }
        guard session.needsRefresh(at: now(), margin: refreshMargin) else { return session.accessToken }
        return try await refreshed(from: session)?.accessToken
    }

    /// A token to retry a call with after the server refused `refused` as expired or invalid:
    /// a newer one when another call has refreshed meanwhile, else one refresh's result.
    func accessToken(replacing refused: String) async throws -> String? {
        guard let session else { return nil }
        guard session.accessToken == refused else { return session.accessToken }
        return try await refreshed(from: session)?.accessToken
    }

    /// Keeps `session`, answered just now by a sign-in, as the signed-in session.
    @discardableResult
    func signedIn(_ session: Session) throws -> StoredSession {
        let stored = StoredSession(session, receivedAt: now())
        try install(stored)
        return stored
    }

    /// Keeps `user` as the signed-in user's latest account data.
    func update(_ user: User) throws {
        guard var session, session.user.id == user.id else { return }
        session.user = user
        try install(session)
    }

    /// Forgets the session here: the store is cleared, `stateChanges` gets nil.
    func signOut() throws {
        storeUnread = false
        session = nil
        refreshing = nil
        broadcast.publish(nil)
        try store.remove()
    }

    // MARK: Refresh

    /// The session after the refresh of `stale`: the one under way, or a new one.
    private func refreshed(from stale: StoredSession) async throws -> StoredSession? {
        if let refreshing { return try await refreshing.task.value }
        let id = UUID()
        let task = Task { try await refresh(stale, id: id) }
        refreshing = (id, task)
        return try await task.value
    }

    /// The refusals of `RefreshSession` that end the session (API.md §3): the refresh token is
    /// unknown, or was used before (the server revoked the whole session family). Any other
    /// failure — no network, a server down, a captive portal's 401 — leaves the session as it
    /// is, to be refreshed later.
    static let sessionEndingReasons: Set<String> = ["INVALID_REFRESH_TOKEN", "REFRESH_TOKEN_REUSED"]

    /// Exchanges `stale`'s refresh token. The new session is kept unless the user signed out
    /// (or in again) meanwhile; a refusal in ``sessionEndingReasons`` ends the session.
    private func refresh(_ stale: StoredSession, id: UUID) async throws -> StoredSession? {
        // Only this refresh's own entry is cleared: a sign-out meanwhile may have let a newer
        // refresh start, which later callers must still join.
        defer { if refreshing?.id == id { refreshing = nil } }
        do {
            let fresh = StoredSession(try await refresher(stale.refreshToken), receivedAt: now())
            guard session?.refreshToken == stale.refreshToken else { return session }
            try install(fresh)
            return fresh
        } catch let error as RPCError where error.code == .unauthenticated && Self.sessionEndingReasons.contains(error.reason ?? "") {
            if session?.refreshToken == stale.refreshToken { try signOut() }
            throw error
        }
    }

    /// Makes `stored` the session, here and in the store, and tells who is signed in. Here
    /// first: after a refresh the server has rotated the old refresh token out, so this process
    /// keeps the new session even when the store cannot save it (the error says so).
    private func install(_ stored: StoredSession) throws {
        storeUnread = false
        session = stored
        broadcast.publish(stored.user)
        try store.save(stored)
    }
}
