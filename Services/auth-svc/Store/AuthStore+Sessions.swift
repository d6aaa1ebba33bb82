internal import Foundation
import ServiceKit
import Storage

/// Sessions, their rotating refresh tokens, revocation and the revocation feed.
extension AuthStore {
    /// How long a session lives from sign-in, whatever its use (API.md: 30 days absolute).
    static let sessionLifetime: Int64 = 30 * 24 * 3600

    /// How long revocations stay in the feed: beyond an access token's 15 minutes and the
    /// verifiers' clock leeway, nobody needs them.
    static let revocationRetention: Int64 = 20 * 60

    /// What presenting a refresh token led to.
    enum RefreshOutcome: Sendable {
        /// The token was current: it is now rotated, and `newHash` is the session's token.
        case rotated(SessionRecord, UserRecord)
        /// The token was already rotated: the whole session was revoked just now.
        case reused(sessionID: String)
        /// Unknown token, or its session is revoked or expired.
        case invalid
    }

    /// Starts a session for `userID` whose first refresh token hashes to `refreshHash`.
    func createSession(
        userID: String, method: String, refreshHash: String, now: Int64 = Timestamp.now()
    ) async throws -> SessionRecord {
        let session = SessionRecord(
            id: UUID().uuidString.lowercased(), userID: userID, method: method, authenticatedAt: now,
            expiresAt: now + Self.sessionLifetime, revokedAt: nil)
        try await database.write { connection in
            try connection.execute(
                """
                INSERT INTO sessions (id, user_id, method, authenticated_at, created_at, expires_at)
                VALUES (?, ?, ?, ?, ?, ?)
                """, [session.id, userID, method, now, now, session.expiresAt])
            try connection.execute(
                "INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES (?, ?, ?)",
                [refreshHash, session.id, now])
        }
        return session
    }

    /// Exchanges the refresh token hashing to `hash` for the one hashing to `newHash`, in one
    /// transaction; a token presented twice revokes its session (the family).
    ///
    /// Presented twice at once — on two replicas — exactly one presentation rotates and the
    /// other is reuse: the rotation claims the token with an update conditional on
    /// `rotated_at IS NULL`, and two transactions updating the same row cannot both commit (on
    /// SQLite one writer runs at a time; on PostgreSQL the later gets a serialization failure
    /// and `Database.write` runs it again, when it finds the token rotated). Should the claim
    /// find the token rotated all the same, that is reuse too.
    func rotateRefreshToken(hash: String, newHash: String, now: Int64 = Timestamp.now()) async throws -> RefreshOutcome {
        try await database.write { connection in
            guard
                let token = try connection.queryOne(
                    "SELECT session_id, rotated_at FROM refresh_tokens WHERE token_hash = ?", [hash]),
                let session = try Self.session(id: try token.value(at: 0), on: connection)
            else { return .invalid }
            guard session.revokedAt == nil, session.expiresAt > now else { return .invalid }
            /// Revokes the session for the reuse of its token.
            func reuse() throws -> RefreshOutcome {
                try Self.revoke(sessionID: session.id, reason: "refresh token reused", now: now, on: connection)
                return .reused(sessionID: session.id)
            }
            if try token.value(at: 1, as: Int64?.self) != nil { return try reuse() }
            guard let user = try Self.user(id: session.userID, on: connection) else { return .invalid }
            let claimed = try connection.execute(
                "UPDATE refresh_tokens SET rotated_at = ? WHERE token_hash = ? AND rotated_at IS NULL", [now, hash])
            guard claimed == 1 else { return try reuse() }
            try connection.execute(
                "INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES (?, ?, ?)",
                [newHash, session.id, now])
            return .rotated(session, user)
        }
    }

    /// Gives a live session a new refresh token (rotating the current one) and a fresh
    /// authentication time: what `ChangePassword` answers the caller with.
    func renewSession(id: String, refreshHash: String, now: Int64 = Timestamp.now()) async throws -> SessionRecord? {
        try await database.write { connection in
            guard var session = try Self.session(id: id, on: connection), session.revokedAt == nil else { return nil }
            try connection.execute(
                "UPDATE refresh_tokens SET rotated_at = ? WHERE session_id = ? AND rotated_at IS NULL", [now, id])
            try connection.execute(
                "INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES (?, ?, ?)",
                [refreshHash, id, now])
            try connection.execute("UPDATE sessions SET authenticated_at = ? WHERE id = ?", [now, id])
            session.authenticatedAt = now
            return session
        }
    }

    /// The session with `id`, revoked or not, or nil.
    func session(id: String) async throws -> SessionRecord? {
        try await database.read { connection in try Self.session(id: id, on: connection) }
    }

    /// Revokes one session; returns whether it was live.
    @discardableResult
    func revokeSession(id: String, reason: String, now: Int64 = Timestamp.now()) async throws -> Bool {
        try await database.write { connection in
            try Self.revoke(sessionID: id, reason: reason, now: now, on: connection)
        }
    }

    /// Revokes every live session of `userID` but `except`; returns the revoked ids.
    func revokeSessions(
        userID: String, except: String? = nil, reason: String, now: Int64 = Timestamp.now()
    ) async throws -> [String] {
        try await database.write { connection in
            try Self.revokeSessions(userID: userID, except: except, reason: reason, now: now, on: connection)
        }
    }

    /// The feed: revocations after `sequence` within the retention window, oldest first, and
    /// the greatest sequence number issued so far.
    func revocations(after sequence: Int64, now: Int64 = Timestamp.now(), limit: Int = 1000) async throws -> (
        [(sessionID: String, revokedAt: Int64)], lastSequence: Int64
    ) {
        try await database.read { connection in
            let rows = try connection.query(
                """
                SELECT sequence, session_id, revoked_at FROM revocations
                WHERE sequence > ? AND revoked_at >= ? ORDER BY sequence LIMIT ?
                """, [sequence, now - Self.revocationRetention, limit])
            let listed = try rows.map { (sessionID: try $0.value(at: 1, as: String.self), revokedAt: try $0.value(at: 2, as: Int64.self)) }
            let last: Int64
            if rows.count == limit, let lastRow = rows.last {
                last = try lastRow.value(at: 0)
            } else {
                last = max(sequence, try connection.queryValue("SELECT coalesce(max(sequence), 0) FROM revocations", as: Int64.self) ?? 0)
            }
            return (listed, last)
        }
    }

    /// Deletes what no longer matters: feed entries past retention, expired sessions' rows.
    func pruneSessions(now: Int64 = Timestamp.now()) async throws {
        try await database.write { connection in
            try connection.execute("DELETE FROM revocations WHERE revoked_at < ?", [now - Self.revocationRetention])
            try connection.execute("DELETE FROM sessions WHERE expires_at < ?", [now - Self.revocationRetention])
        }
    }

    // MARK: Shared SQL

    /// The session with `id`, read on `connection`.
    static func session(id: String, on connection: Connection) throws -> SessionRecord? {
        guard
            let row = try connection.queryOne(
                "SELECT user_id, method, authenticated_at, expires_at, revoked_at FROM sessions WHERE id = ?", [id])
        else { return nil }
        return SessionRecord(
            id: id, userID: try row.value(at: 0), method: try row.value(at: 1), authenticatedAt: try row.value(at: 2),
            expiresAt: try row.value(at: 3), revokedAt: try row.value(at: 4))
    }

    /// Revokes a live session and records it in the feed; whether it was live.
    @discardableResult
    static func revoke(sessionID: String, reason: String, now: Int64, on connection: Connection) throws -> Bool {
        let changed = try connection.execute(
            "UPDATE sessions SET revoked_at = ?, revoke_reason = ? WHERE id = ? AND revoked_at IS NULL",
            [now, reason, sessionID])
        guard changed == 1 else { return false }
        try connection.execute(appendRevocationSQL(connection.dialect), [sessionID, now])
        return true
    }

    /// The statement appending `(session_id, revoked_at)` to the feed under the next sequence
    /// number. SQLite's `AUTOINCREMENT` numbers in commit order (one writer at a time);
    /// PostgreSQL takes the number from the counter row `revocation_sequence`, whose update
    /// makes concurrent revocations conflict (the later is run again by `Database.write`), so
    /// there too numbers follow commit order (see `AuthSchema.postgreSQLMigrations`).
    private static func appendRevocationSQL(_ dialect: SQLDialect) -> String {
        switch dialect {
        case .sqlite:
            "INSERT INTO revocations (session_id, revoked_at) VALUES (?, ?)"
        case .postgresql:
            """
            WITH next AS (UPDATE revocation_sequence SET last = last + 1 RETURNING last)
            INSERT INTO revocations (sequence, session_id, revoked_at)
            SELECT last, CAST(? AS TEXT), CAST(? AS BIGINT) FROM next
            """
        }
    }

    /// Revokes every live session of `userID` but `except`; returns their ids.
    static func revokeSessions(
        userID: String, except: String?, reason: String, now: Int64, on connection: Connection
    ) throws -> [String] {
        let ids = try connection.query(
            "SELECT id FROM sessions WHERE user_id = ? AND revoked_at IS NULL AND id <> ?", [userID, except ?? ""]
        ).map { try $0.value(at: 0, as: String.self) }
        for id in ids { try revoke(sessionID: id, reason: reason, now: now, on: connection) }
        return ids
    }
}
