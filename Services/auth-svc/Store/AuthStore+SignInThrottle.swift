import Storage

/// What the sign-in throttle (``SignInThrottle``) shares between replicas: the failures on
/// record per account and per client address (`sign_in_failures`, one row per failure and
/// subject), and the accounts locked (`sign_in_locks`). Times here are Unix *milliseconds*
/// (the throttle's window and lock end are finer than a second).
///
/// A failure is one transaction (both rows, and the lock when they make the account's count
/// reach the limit); on PostgreSQL two failures of one account at once, on two replicas, each
/// read the rows the other inserts, so one fails serialization and `Database.write` runs it
/// again after the other: the count that decides the lock always includes every failure
/// committed before it, whichever replica recorded it.
extension AuthStore {
    /// The two kinds of rows in `sign_in_failures`: `subject` is an account (its lower-cased
    /// email, known or not) or a client address.
    private enum SignInSubject: String {
        case account, address
    }

    /// The failures of `account` and from `address` after `since`, and the end of the
    /// account's lock (nil when it has none on record, ended or not): one read.
    func signInRecord(account: String, address: String, since: Int64) async throws -> SignInRecord {
        try await database.read { connection in
            guard
                let row = try connection.queryOne(
                    """
                    SELECT
                        (SELECT count(*) FROM sign_in_failures WHERE kind = ? AND subject = ? AND failed_at_ms > ?),
                        (SELECT count(*) FROM sign_in_failures WHERE kind = ? AND subject = ? AND failed_at_ms > ?),
                        (SELECT locked_until_ms FROM sign_in_locks WHERE account = ?)
                    """,
                    [
                        SignInSubject.account.rawValue, account, since, SignInSubject.address.rawValue, address, since,
                        account,
                    ])
            else { return SignInRecord(accountFailures: 0, addressFailures: 0, lockedUntil: nil) }
            return SignInRecord(
                accountFailures: try row.value(at: 0), addressFailures: try row.value(at: 1),
                lockedUntil: try row.value(at: 2))
        }
    }

    /// Records a failure of `account` from `address` at `now`; when the account's failures
    /// after `since` then number `lockAfter` or more, locks it until `lockedUntil` (a lock
    /// already on record is only ever moved later). When `prune`, also deletes what no
    /// decision reads any more (``pruneSignInRecords(failedBy:lockEndedBy:on:)``, with `since`
    /// and `now`).
    func recordSignInFailure(
        account: String, address: String, at now: Int64, since: Int64, lockAfter: Int, lockedUntil: Int64, prune: Bool
    ) async throws {
        try await database.write { connection in
            try connection.execute(
                "INSERT INTO sign_in_failures (kind, subject, failed_at_ms) VALUES (?, ?, ?), (?, ?, ?)",
                [SignInSubject.account.rawValue, account, now, SignInSubject.address.rawValue, address, now])
            // The SELECT needs its WHERE for SQLite to read ON CONFLICT as the upsert's.
            try connection.execute(
                """
                INSERT INTO sign_in_locks (account, locked_until_ms)
                SELECT CAST(? AS TEXT), CAST(? AS BIGINT)
                WHERE (SELECT count(*) FROM sign_in_failures WHERE kind = ? AND subject = ? AND failed_at_ms > ?) >= ?
                ON CONFLICT (account) DO UPDATE SET locked_until_ms = excluded.locked_until_ms
                WHERE excluded.locked_until_ms > sign_in_locks.locked_until_ms
                """, [account, lockedUntil, SignInSubject.account.rawValue, account, since, lockAfter])
            if prune { try Self.pruneSignInRecords(failedBy: since, lockEndedBy: now, on: connection) }
        }
    }

    /// Forgets the failures of `account` and its lock: after a successful sign-in (the
    /// failures of its client address stay).
    func clearSignInFailures(account: String) async throws {
        try await database.write { connection in try Self.clearSignInFailures(account: account, on: connection) }
    }

    // MARK: Shared SQL

    /// Deletes the failures of `account` and its lock, on `connection`: a completed password
    /// reset does so in its own transaction.
    static func clearSignInFailures(account: String, on connection: Connection) throws {
        try connection.execute(
            "DELETE FROM sign_in_failures WHERE kind = ? AND subject = ?", [SignInSubject.account.rawValue, account])
        try connection.execute("DELETE FROM sign_in_locks WHERE account = ?", [account])
    }

    /// Deletes the failures at or before `failedBy` (out of the window: no count includes them)
    /// and the locks that ended by `lockEndedBy`.
    private static func pruneSignInRecords(failedBy: Int64, lockEndedBy: Int64, on connection: Connection) throws {
        try connection.execute("DELETE FROM sign_in_failures WHERE failed_at_ms <= ?", [failedBy])
        try connection.execute("DELETE FROM sign_in_locks WHERE locked_until_ms <= ?", [lockEndedBy])
    }
}
