@testable import auth_svc
import Credentials
import ServiceTestSupport
import Storage

/// Fresh stores for the store tests: every call opens its own empty database, so no test sees
/// another's rows — a private `:memory:` SQLite database, or, when the suites run on PostgreSQL
/// (`STOREFRONT_TEST_BACKEND=postgresql`, ``TestBackend``), the schema `auth` of a PostgreSQL
/// database of its own.
extension AuthStore {
    /// A fixed instant (Unix seconds) that store tests count from via the `now:` parameters.
    static let testEpoch: Int64 = 1_750_000_000

    /// An empty, migrated store that lives only in memory.
    static func inMemory() async throws -> AuthStore {
        AuthStore(database: try await Database(path: ":memory:", migrations: AuthSchema.migrations))
    }

    /// Runs `body` with an empty, migrated store on the backend the suites run on: in memory
    /// (``inMemory()``), or on PostgreSQL in a database created for it, closed and dropped
    /// when `body` ends.
    static func withFresh<Result>(_ body: (AuthStore) async throws -> Result) async throws -> Result {
        guard TestBackend.isPostgreSQL else { return try await body(inMemory()) }
        return try await withPostgreSQL(body)
    }

    /// Runs `body` with an empty store in the schema `auth` of a PostgreSQL database created
    /// for it (``PostgreSQLServer/withDatabase(_:)``), closed and dropped when `body` ends.
    /// Holds one of ``postgreSQLStoreSlots`` meanwhile.
    static func withPostgreSQL<Result>(_ body: (AuthStore) async throws -> Result) async throws -> Result {
        try await postgreSQLStoreSlots.withSlots {
            try await PostgreSQLServer.withDatabase { url in
                let store = try await AuthStore.open(location: .postgresql(url: url, schema: "auth"))
                let outcome: Swift.Result<Result, any Error>
                do { outcome = .success(try await body(store)) } catch { outcome = .failure(error) }
                await store.database.close()
                return try outcome.get()
            }
        }
    }

    /// Bounds how many PostgreSQL stores the store tests hold open at once: each holds a pool
    /// of connections (`DatabaseOptions.postgreSQLConnectionCount`) to the test process's
    /// shared server, and every store test starting at once would open more than its
    /// `max_connections` allows.
    static let postgreSQLStoreSlots = ConcurrencySlots(limit: 16)

    /// A user with a password, created at `testEpoch` with the given lower-case `email`.
    func makePasswordUser(_ email: String, verified: Bool = false) async throws -> UserRecord {
        try await createUser(
            email: email, passwordHash: "$scrypt$test-hash", displayName: nil, emailVerified: verified,
            now: Self.testEpoch)
    }

    /// Starts a session for `userID` at `now` and returns it with the refresh token's hash.
    func makeSession(for userID: String, now: Int64 = testEpoch) async throws -> (SessionRecord, refreshHash: String) {
        let refreshHash = OpaqueToken.hash(OpaqueToken.generate())
        let session = try await createSession(userID: userID, method: "password", refreshHash: refreshHash, now: now)
        return (session, refreshHash)
    }
}

extension AuthStore {
    /// Rows in `email_tokens`, used or not.
    func emailTokenCount() async throws -> Int64 {
        try await database.read { try $0.queryValue("SELECT count(*) FROM email_tokens", as: Int64.self) ?? 0 }
    }
}

extension AuthStore {
    /// Rows in the sign-in throttle's tables: failures (two a failure) and locks.
    func signInRowCounts() async throws -> (failures: Int64, locks: Int64) {
        try await database.read { connection in
            (
                try connection.queryValue("SELECT count(*) FROM sign_in_failures", as: Int64.self) ?? 0,
                try connection.queryValue("SELECT count(*) FROM sign_in_locks", as: Int64.self) ?? 0
            )
        }
    }
}
