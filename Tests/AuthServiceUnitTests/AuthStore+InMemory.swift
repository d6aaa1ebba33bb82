@testable import auth_svc
import Credentials
import Storage

/// Fresh stores for the store tests: every call opens its own private `:memory:` database, so
/// no test sees another's rows.
extension AuthStore {
    /// A fixed instant (Unix seconds) that store tests count from via the `now:` parameters.
    static let testEpoch: Int64 = 1_750_000_000

    /// An empty, migrated store that lives only in memory.
    static func inMemory() async throws -> AuthStore {
        AuthStore(database: try await Database(path: ":memory:", migrations: AuthSchema.migrations))
    }

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
