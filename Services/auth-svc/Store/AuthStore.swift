internal import Foundation
import ServiceKit
import Storage
import Telemetry

/// The SQL of auth-svc: users and identities here; sessions, email tokens and the outbox in
/// the `AuthStore+…` extensions. Nothing else in the service writes SQL.
///
/// Thread-safe (`Sendable`): every method runs on the database's own threads. Every write is
/// one transaction that sees every write committed before it, by this process or another
/// replica (`Database.write`: one writer at a time on SQLite; `SERIALIZABLE`, and run again on
/// conflict, on PostgreSQL), so a write closure may run more than once: ids and times are made
/// outside it, and it has no effect but on the database.
final class AuthStore: Sendable {
    /// Why a write was refused.
    enum Conflict: Error, Sendable, Hashable {
        /// Another account already has this email address.
        case emailInUse
        /// The user does not exist (any more).
        case noSuchUser
    }

    /// The database: `auth.sqlite` in the data directory, the schema `auth` of a PostgreSQL
    /// database, or `:memory:` in tests.
    let database: Database

    /// Wraps an open database whose migrations are `AuthSchema.migrations`.
    init(database: Database) {
        self.database = database
    }

    /// Opens (creating and migrating) the database at `location`, on SQLite with
    /// `synchronous=FULL`: an acknowledged account or session survives a power loss. Its
    /// queries and transactions are recorded in `metrics`, when given.
    static func open(location: DatabaseLocation, metrics: MetricsRegistry? = nil) async throws -> AuthStore {
        let database = try await Database(
            location: location, options: DatabaseOptions(synchronous: .full, metrics: metrics), migrations: AuthSchema.allMigrations)
        return AuthStore(database: database)
    }

    // MARK: Users

    /// Creates a user; `Conflict.emailInUse` when the (lower-cased) email is taken — also by a
    /// sign-up committed at the same moment on another replica: the unique index `users_email`
    /// refuses the second row.
    func createUser(
        email: String, passwordHash: String?, displayName: String?, emailVerified: Bool = false,
        now: Int64 = Timestamp.now()
    ) async throws -> UserRecord {
        let id = UUID().uuidString.lowercased()
        do {
            try await database.write { connection in
                try Self.insertUser(
                    id: id, email: email, passwordHash: passwordHash, displayName: displayName,
                    emailVerified: emailVerified, now: now, on: connection)
            }
        } catch let error as StorageError where error.isUniqueViolation {
            throw Conflict.emailInUse
        }
        return UserRecord(
            id: id, email: email, emailVerified: emailVerified, displayName: displayName, passwordHash: passwordHash,
            providers: passwordHash == nil ? [] : ["password"], createdAt: now)
    }

    /// The user with `id`, or nil.
    func user(id: String) async throws -> UserRecord? {
        try await database.read { connection in try Self.user(id: id, on: connection) }
    }

    /// The user with the (lower-cased) `email`, or nil.
    func user(email: String) async throws -> UserRecord? {
        guard !email.isEmpty else { return nil }
        return try await database.read { connection in
            guard let id = try connection.queryValue("SELECT id FROM users WHERE email = ?", [email], as: String.self)
            else { return nil }
            return try Self.user(id: id, on: connection)
        }
    }

    /// Sets the display name (nil clears it) and returns the updated user.
    func updateDisplayName(userID: String, to name: String?, now: Int64 = Timestamp.now()) async throws -> UserRecord {
        try await database.write { connection in
            let changed = try connection.execute(
                "UPDATE users SET display_name = ?, updated_at = ? WHERE id = ?", [name, now, userID])
            guard changed == 1, let user = try Self.user(id: userID, on: connection) else { throw Conflict.noSuchUser }
            return user
        }
    }

    /// Replaces a password hash (after a re-hash at higher cost), if the stored one is still `old`.
    func replacePasswordHash(userID: String, old: String, new: String) async throws {
        try await database.write { connection in
            try connection.execute(
                "UPDATE users SET password_hash = ? WHERE id = ? AND password_hash = ?", [new, userID, old])
        }
    }

    /// Deletes the user, their identities and email tokens, and revokes every session.
    /// Returns the revoked session ids.
    func deleteUser(id: String, now: Int64 = Timestamp.now()) async throws -> [String] {
        try await database.write { connection in
            let revoked = try Self.revokeSessions(userID: id, except: nil, reason: "account deleted", now: now, on: connection)
            try connection.execute("DELETE FROM users WHERE id = ?", [id])
            return revoked
        }
    }

    // MARK: Identities

    /// The user signed in through the provider identity (issuer, subject), or nil.
    func user(issuer: String, subject: String) async throws -> UserRecord? {
        try await database.read { connection in
            guard
                let id = try connection.queryValue(
                    "SELECT user_id FROM identities WHERE issuer = ? AND subject = ?", [issuer, subject],
                    as: String.self)
            else { return nil }
            return try Self.user(id: id, on: connection)
        }
    }

    /// Finds or creates the user of a provider identity, in one transaction: the identity's
    /// user; else, when the provider vouches for the email, the account with that email (linked,
    /// and marked verified — see ``forgetUnprovenAccess(userID:keepPassword:now:on:)`` for what an
    /// account nobody had proved loses then); else a new account. `Conflict.emailInUse` when the
    /// email belongs to another account and the provider does not vouch for it. Returns the user
    /// and the sessions revoked.
    ///
    /// Two first sign-ins with one identity at once (two replicas) make one account: each reads
    /// the identity and the email the other inserts, so on PostgreSQL the later fails
    /// serialization and is run again by `Database.write`, when it finds the identity (or, as
    /// the last line of defence, the unique keys of `identities` and `users_email` refuse it).
    func userForIdentity(
        provider: String, issuer: String, subject: String, email: String, emailVerified: Bool,
        now: Int64 = Timestamp.now()
    ) async throws -> (UserRecord, revoked: [String]) {
        let newUserID = UUID().uuidString.lowercased()
        do {
            return try await database.write { connection in
                if let id = try connection.queryValue(
                    "SELECT user_id FROM identities WHERE issuer = ? AND subject = ?", [issuer, subject], as: String.self),
                    let user = try Self.user(id: id, on: connection)
                {
                    return (user, [])
                }
                let existing =
                    email.isEmpty
                    ? nil : try connection.queryValue("SELECT id FROM users WHERE email = ?", [email], as: String.self)
                let userID: String
                var revoked: [String] = []
                if let existing {
                    guard emailVerified else { throw Conflict.emailInUse }
                    userID = existing
                    revoked = try Self.forgetUnprovenAccess(userID: userID, keepPassword: false, now: now, on: connection)
                    try connection.execute(
                        "UPDATE users SET email_verified = 1, updated_at = ? WHERE id = ?", [now, userID])
                } else {
                    userID = newUserID
                    try Self.insertUser(
                        id: userID, email: email, passwordHash: nil, displayName: nil, emailVerified: emailVerified,
                        now: now, on: connection)
                }
                try connection.execute(
                    """
                    INSERT INTO identities (issuer, subject, provider, user_id, email, email_verified, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """, [issuer, subject, provider, userID, email, emailVerified || email.isEmpty ? 1 : 0, now])
                guard let user = try Self.user(id: userID, on: connection) else { throw Conflict.noSuchUser }
                return (user, revoked)
            }
        } catch let error as StorageError where error.isUniqueViolation {
            throw Conflict.emailInUse
        }
    }

    /// Called in the transaction that proves `userID`'s email address (a reset or verification
    /// link, a provider vouching for it), before it is marked verified. What was attached to the
    /// account while nobody had proved the address may be someone else's — an attacker can sign
    /// up with another's address, or sign in with a provider account claiming it, and wait for
    /// its owner (account pre-hijacking) — so it goes: identities linked with an unverified
    /// email, with every session; and, unless `keepPassword`, the password of an account that
    /// was never verified. Returns the revoked session ids (none when nothing was taken away).
    static func forgetUnprovenAccess(userID: String, keepPassword: Bool, now: Int64, on connection: Connection) throws -> [String] {
        let wasVerified = try connection.queryValue("SELECT email_verified FROM users WHERE id = ?", [userID], as: Int.self) == 1
        let hasPassword = try connection.queryValue(
            "SELECT password_hash IS NOT NULL FROM users WHERE id = ?", [userID], as: Int.self) == 1
        let passwordGoes = !keepPassword && !wasVerified && hasPassword
        let dropped = try connection.execute("DELETE FROM identities WHERE user_id = ? AND email_verified = 0", [userID])
        guard dropped > 0 || passwordGoes else { return [] }
        if passwordGoes {
            try connection.execute("UPDATE users SET password_hash = NULL, updated_at = ? WHERE id = ?", [now, userID])
        }
        return try revokeSessions(userID: userID, except: nil, reason: "address proved", now: now, on: connection)
    }

    // MARK: Shared SQL

    /// Inserts a user row.
    static func insertUser(
        id: String, email: String, passwordHash: String?, displayName: String?, emailVerified: Bool, now: Int64,
        on connection: Connection
    ) throws {
        try connection.execute(
            """
            INSERT INTO users (id, email, email_verified, display_name, password_hash, created_at, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """, [id, email, emailVerified, displayName, passwordHash, now, now])
    }

    /// The user with `id` and its providers, read on `connection`.
    static func user(id: String, on connection: Connection) throws -> UserRecord? {
        guard
            let row = try connection.queryOne(
                "SELECT email, email_verified, display_name, password_hash, created_at FROM users WHERE id = ?", [id])
        else { return nil }
        let passwordHash = try row.value(at: 3, as: String?.self)
        let linked = try connection.query(
            "SELECT DISTINCT provider FROM identities WHERE user_id = ? ORDER BY provider", [id]
        ).map { try $0.value(at: 0, as: String.self) }
        return UserRecord(
            id: id, email: try row.value(at: 0), emailVerified: try row.value(at: 1), displayName: try row.value(at: 2),
            passwordHash: passwordHash, providers: (passwordHash == nil ? [] : ["password"]) + linked,
            createdAt: try row.value(at: 4))
    }
}
