import ServiceKit
import Storage

/// Single-use verification and reset tokens, and the outbox their emails go through.
extension AuthStore {
    /// Why a verification or reset token was refused.
    enum EmailTokenProblem: Error, Sendable, Hashable {
        /// Unknown, already used, or for another purpose.
        case invalid
        /// Past its lifetime.
        case expired
    }

    /// Stores a token (by hash) for `userID` and queues `email`, which carries it, in one
    /// transaction: a token is never valid without its email on the way. A new reset token
    /// invalidates the older unused ones — also when two are issued at once on two replicas:
    /// each transaction reads the unused tokens the other inserts, so on PostgreSQL one of them
    /// fails serialization and `Database.write` runs it again, after the other (on SQLite one
    /// writer runs at a time). Either way only the later token stays usable.
    func issueEmailToken(
        userID: String, purpose: EmailTokenPurpose, tokenHash: String, email: OutgoingEmail,
        now: Int64 = Timestamp.now()
    ) async throws {
        try await database.write { connection in
            if purpose == .resetPassword {
                try connection.execute(
                    "UPDATE email_tokens SET used_at = ? WHERE user_id = ? AND purpose = ? AND used_at IS NULL",
                    [now, userID, purpose.rawValue])
            }
            try connection.execute(
                """
                INSERT INTO email_tokens (token_hash, user_id, purpose, email, created_at, expires_at)
                VALUES (?, ?, ?, ?, ?, ?)
                """, [tokenHash, userID, purpose.rawValue, email.recipient, now, now + purpose.lifetime])
            try connection.execute(
                """
                INSERT INTO outbox (recipient, kind, subject, body, created_at, next_attempt_at)
                VALUES (?, ?, ?, ?, ?, ?)
                """, [email.recipient, email.kind.rawValue, email.subject, email.body, now, now])
        }
    }

    /// Checks a token without using it: the user it belongs to, or the problem.
    func checkEmailToken(hash: String, purpose: EmailTokenPurpose, now: Int64 = Timestamp.now()) async throws -> Result<
        String, EmailTokenProblem
    > {
        try await database.read { connection in try Self.checkEmailToken(hash: hash, purpose: purpose, now: now, on: connection) }
    }

    /// Uses a verification token: marks its address verified (the account keeps its password:
    /// its owner set it at sign-up) and returns the user and the sessions revoked with what
    /// ``AuthStore/forgetUnprovenAccess(userID:keepPassword:now:on:)`` takes away. A token is
    /// used once, even when presented on two replicas at once (``claimEmailToken(hash:now:on:)``).
    func redeemVerificationToken(hash: String, now: Int64 = Timestamp.now()) async throws -> Result<
        (UserRecord, revoked: [String]), EmailTokenProblem
    > {
        try await database.write { connection in
            let userID: String
            switch try Self.checkEmailToken(hash: hash, purpose: .verifyEmail, now: now, on: connection) {
            case .failure(let problem): return .failure(problem)
            case .success(let id): userID = id
            }
            guard try Self.claimEmailToken(hash: hash, now: now, on: connection) else { return .failure(.invalid) }
            // Only the address the link was sent to is proved, should the account have changed it.
            var revoked: [String] = []
            if try Self.linkProvesAddress(hash: hash, userID: userID, on: connection) {
                revoked = try Self.forgetUnprovenAccess(userID: userID, keepPassword: true, now: now, on: connection)
                try connection.execute("UPDATE users SET email_verified = 1, updated_at = ? WHERE id = ?", [now, userID])
            }
            guard let user = try Self.user(id: userID, on: connection) else { return .failure(.invalid) }
            return .success((user, revoked))
        }
    }

    /// Uses a reset token: sets the new password hash, marks the address verified (the link
    /// proved it), revokes every session, invalidates the user's other reset tokens and lifts
    /// the account's sign-in lock (``clearSignInFailures(account:on:)``). Returns the user and
    /// the revoked session ids. A token is used once, even when presented on two replicas at
    /// once (``claimEmailToken(hash:now:on:)``).
    func redeemResetToken(
        hash: String, newPasswordHash: String, now: Int64 = Timestamp.now()
    ) async throws -> Result<(UserRecord, revoked: [String]), EmailTokenProblem> {
        try await database.write { connection in
            let userID: String
            switch try Self.checkEmailToken(hash: hash, purpose: .resetPassword, now: now, on: connection) {
            case .failure(let problem): return .failure(problem)
            case .success(let id): userID = id
            }
            guard try Self.claimEmailToken(hash: hash, now: now, on: connection) else { return .failure(.invalid) }
            try connection.execute(
                "UPDATE email_tokens SET used_at = ? WHERE user_id = ? AND purpose = ? AND used_at IS NULL",
                [now, userID, EmailTokenPurpose.resetPassword.rawValue])
            var revoked: [String] = []
            if try Self.linkProvesAddress(hash: hash, userID: userID, on: connection) {
                revoked = try Self.forgetUnprovenAccess(userID: userID, keepPassword: true, now: now, on: connection)
                try connection.execute(
                    "UPDATE users SET password_hash = ?, email_verified = 1, updated_at = ? WHERE id = ?",
                    [newPasswordHash, now, userID])
            }
            revoked += try Self.revokeSessions(
                userID: userID, except: nil, reason: "password reset", now: now, on: connection)
            guard let user = try Self.user(id: userID, on: connection) else { return .failure(.invalid) }
            // The link proved the mailbox and the password guessed at is gone: the account's
            // sign-in lock, if any, has nothing left to protect (on every replica).
            try Self.clearSignInFailures(account: user.email, on: connection)
            return .success((user, revoked))
        }
    }

    /// Whether the link of token `hash` was sent to `userID`'s current address (the account may
    /// have changed it since): only then does using it prove the address.
    private static func linkProvesAddress(hash: String, userID: String, on connection: Connection) throws -> Bool {
        try connection.queryValue(
            "SELECT 1 FROM users WHERE id = ? AND email = (SELECT email FROM email_tokens WHERE token_hash = ?)",
            [userID, hash], as: Int.self) != nil
    }

    /// Sets a new password hash and revokes every session of the user but `keeping`.
    /// Returns the revoked session ids.
    func changePassword(
        userID: String, newPasswordHash: String, keeping sessionID: String, now: Int64 = Timestamp.now()
    ) async throws -> [String] {
        try await database.write { connection in
            try connection.execute(
                "UPDATE users SET password_hash = ?, updated_at = ? WHERE id = ?", [newPasswordHash, now, userID])
            try connection.execute(
                "UPDATE email_tokens SET used_at = ? WHERE user_id = ? AND purpose = ? AND used_at IS NULL",
                [now, userID, EmailTokenPurpose.resetPassword.rawValue])
            return try Self.revokeSessions(
                userID: userID, except: sessionID, reason: "password changed", now: now, on: connection)
        }
    }

    // MARK: Outbox

    /// Up to `limit` emails due for delivery at `now`, oldest first.
    func dueEmails(now: Int64 = Timestamp.now(), limit: Int = 50) async throws -> [OutboxEntry] {
        try await database.read { connection in
            try connection.query(
                "SELECT \(Self.outboxColumns) FROM outbox WHERE next_attempt_at <= ? ORDER BY id LIMIT ?", [now, limit]
            ).map(Self.outboxEntry)
        }
    }

    /// Takes the oldest email due by `dueBy` for one delivery attempt and returns it, or nil
    /// when none is: its next attempt moves to `now + lease`, so no other replica's outbox takes
    /// it meanwhile. ``removeEmail(outboxID:)`` or ``markFailed(outboxID:error:retryAt:)``
    /// settles it; should the process die first, it falls due again when the lease ends.
    /// Two replicas taking the same email at once update the same row, which cannot commit
    /// twice: one SQLite writer runs at a time, and on PostgreSQL the later fails serialization
    /// and, run again by `Database.write`, takes the next email.
    func claimDueEmail(dueBy: Int64, now: Int64 = Timestamp.now(), lease: Int64) async throws -> OutboxEntry? {
        try await database.write { connection in
            try connection.queryOne(
                """
                UPDATE outbox SET next_attempt_at = ?
                WHERE id = (SELECT id FROM outbox WHERE next_attempt_at <= ? ORDER BY id LIMIT 1)
                RETURNING \(Self.outboxColumns)
                """, [now + lease, dueBy]
            ).map(Self.outboxEntry)
        }
    }

    /// The columns of `outbox` that ``outboxEntry(_:)`` reads, in its order.
    private static let outboxColumns = "id, recipient, kind, subject, body, attempts, created_at"

    /// The entry a row of ``outboxColumns`` describes.
    private static func outboxEntry(_ row: Row) throws -> OutboxEntry {
        OutboxEntry(
            id: try row.value(at: 0),
            email: OutgoingEmail(
                recipient: try row.value(at: 1),
                kind: EmailTokenPurpose(rawValue: try row.value(at: 2)) ?? .verifyEmail,
                subject: try row.value(at: 3), body: try row.value(at: 4)),
            attempts: try row.value(at: 5), queuedAt: try row.value(at: 6))
    }

    /// When the next email falls due, or nil when the outbox is empty.
    func nextEmailDue() async throws -> Int64? {
        try await database.read { connection in
            try connection.queryValue("SELECT min(next_attempt_at) FROM outbox", as: Int64?.self) ?? nil
        }
    }

    /// Removes an email from the outbox: delivered, or given up on.
    func removeEmail(outboxID: Int64) async throws {
        try await database.write { connection in
            try connection.execute("DELETE FROM outbox WHERE id = ?", [outboxID])
        }
    }

    /// Records a failed attempt and when to try again.
    func markFailed(outboxID: Int64, error: String, retryAt: Int64) async throws {
        try await database.write { connection in
            try connection.execute(
                "UPDATE outbox SET attempts = attempts + 1, last_error = ?, next_attempt_at = ? WHERE id = ?",
                [String(error.prefix(500)), retryAt, outboxID])
        }
    }

    /// How long an expired token's row is kept: its link is answered `TOKEN_EXPIRED` (ask for
    /// a new one) rather than `INVALID_TOKEN` for this long after it expired.
    static let expiredTokenRetention: Int64 = 30 * 24 * 3600

    /// Deletes the rows of tokens, used or not, that expired more than
    /// ``expiredTokenRetention`` ago: one row per email sent would otherwise stay for good.
    func pruneEmailTokens(now: Int64 = Timestamp.now()) async throws {
        try await database.write { connection in
            try connection.execute("DELETE FROM email_tokens WHERE expires_at < ?", [now - Self.expiredTokenRetention])
        }
    }

    // MARK: Shared SQL

    /// Marks the token `hash` used, if it is not yet; whether it was not. Two transactions
    /// claiming the same token cannot both commit — one SQLite writer runs at a time, and on
    /// PostgreSQL the later fails serialization on the row and is run again by
    /// `Database.write`, when the token is used — so a link works once.
    static func claimEmailToken(hash: String, now: Int64, on connection: Connection) throws -> Bool {
        try connection.execute(
            "UPDATE email_tokens SET used_at = ? WHERE token_hash = ? AND used_at IS NULL", [now, hash]) == 1
    }

    /// The owner of a usable token, or why it is not usable, read on `connection`.
    static func checkEmailToken(
        hash: String, purpose: EmailTokenPurpose, now: Int64, on connection: Connection
    ) throws -> Result<String, EmailTokenProblem> {
        guard
            let row = try connection.queryOne(
                "SELECT user_id, expires_at, used_at FROM email_tokens WHERE token_hash = ? AND purpose = ?",
                [hash, purpose.rawValue]),
            try row.value(at: 2, as: Int64?.self) == nil
        else { return .failure(.invalid) }
        guard try row.value(at: 1, as: Int64.self) > now else { return .failure(.expired) }
        return .success(try row.value(at: 0))
    }
}
