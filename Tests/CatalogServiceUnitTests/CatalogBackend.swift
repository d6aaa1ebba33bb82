@testable import catalog_svc
import Contracts
import Foundation
import ServiceTestSupport
import Storage
import Testing

/// The database a `CatalogStore` test runs on: SQLite in memory, or PostgreSQL — a database of
/// its own on the test process's shared server (`PostgreSQLServer.withDatabase`), so the
/// suites whose tests take a backend are live suites.
enum CatalogBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// `:memory:`.
    case sqlite
    /// The schema `catalog` of a fresh PostgreSQL database.
    case postgresql

    /// The backend's name in test results.
    var testDescription: String { rawValue }

    /// Runs `body` with a new, migrated store on this backend — holding the seed catalog when
    /// `seeded` — and closes it afterwards (on PostgreSQL its database is then dropped).
    func withStore<Value>(seeded: Bool = true, _ body: (CatalogStore) async throws -> Value) async throws -> Value {
        switch self {
        case .sqlite:
            let database = try await Database(path: ":memory:", migrations: CatalogSchema.migrations)
            return try await Self.run(body, on: CatalogStore(database: database), seeded: seeded)
        case .postgresql:
            return try await Self.withPostgreSQLDatabase { url in try await Self.withStore(at: url, seeded: seeded, body) }
        }
    }

    /// Runs `body` with a new, migrated store in the schema `catalog` of the PostgreSQL
    /// database at `url` — holding the seed catalog when `seeded` — and closes it afterwards.
    static func withStore<Value>(at url: String, seeded: Bool = true, _ body: (CatalogStore) async throws -> Value) async throws -> Value {
        try await run(body, on: try await CatalogStore.open(location: .postgresql(url: url, schema: "catalog")), seeded: seeded)
    }

    /// Runs `body` with the URL of a fresh PostgreSQL database (``PostgreSQLServer/withDatabase(_:)``),
    /// holding `stores` of ``postgreSQLStoreSlots`` meanwhile: one per store it opens there.
    static func withPostgreSQLDatabase<Value>(stores: Int = 1, _ body: (String) async throws -> Value) async throws -> Value {
        try await postgreSQLStoreSlots.withSlots(stores) { try await PostgreSQLServer.withDatabase(body) }
    }

    /// Runs `body` with the URL of a fresh database on the test process's PostgreSQL server
    /// whose default collation is ICU's `icuLocale` (which sorts and folds case unlike bytes),
    /// dropped afterwards; holds one of ``postgreSQLStoreSlots`` meanwhile.
    static func withPostgreSQLDatabase<Value>(collatedAs icuLocale: String, _ body: (String) async throws -> Value) async throws -> Value {
        try await postgreSQLStoreSlots.withSlots {
            let server = try await PostgreSQLServer.sharedServerURL()
            let name = "catalog_icu_" + UUID().uuidString.prefix(8).lowercased()
            let create = try await Command.run(
                "psql",
                ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", server, "-c",
                 "CREATE DATABASE \(name) LOCALE_PROVIDER icu ICU_LOCALE '\(icuLocale)' LOCALE 'C.UTF-8' TEMPLATE template0"],
                timeout: .seconds(60))
            try #require(create.status == 0, "\(create)")
            let outcome: Result<Value, any Error>
            do {
                outcome = .success(try await body(PostgreSQLServer.databaseURL(server, database: name)))
            } catch {
                outcome = .failure(error)
            }
            try? await PostgreSQLServer.dropDatabase(name)
            return try outcome.get()
        }
    }

    /// Bounds how many PostgreSQL stores these tests hold open at once: each holds a pool of
    /// connections (`DatabaseOptions.postgreSQLConnectionCount`) to the test process's shared
    /// server, and every test starting at once would open more than its `max_connections`
    /// allows.
    static let postgreSQLStoreSlots = ConcurrencySlots(limit: 6)

    /// Seeds `store` when `seeded`, runs `body` with it and closes it, whatever `body` did.
    private static func run<Value>(
        _ body: (CatalogStore) async throws -> Value, on store: CatalogStore, seeded: Bool
    ) async throws -> Value {
        let outcome: Result<Value, any Error>
        do {
            if seeded { try await store.seedIfNeeded(with: SeedCatalog.products) }
            outcome = .success(try await body(store))
        } catch {
            outcome = .failure(error)
        }
        await store.database.close()
        return try outcome.get()
    }
}
