import ServiceTestSupport
import ServiceKit
import Storage

@testable import order_svc

/// The database an `OrderStore` test runs on: SQLite in memory, or a fresh PostgreSQL database
/// on the test server (``PostgreSQLServer/withDatabase(_:)``) in the schema `orders`, as
/// order-svc opens it.
enum StoreBackend: String, Sendable, CaseIterable {
    /// A private in-memory SQLite database.
    case sqlite
    /// A fresh database on the test PostgreSQL server.
    case postgresql

    /// Runs `body` with a store on a fresh, migrated database, closed afterwards.
    func withStore(_ body: (OrderStore) async throws -> Void) async throws {
        try await withStores(count: 1) { stores in try await body(stores[0]) }
    }

    /// Runs `body` with `count` stores on one fresh, migrated database, each with its own
    /// replica id, as replicas of order-svc have: on PostgreSQL each with its own `Database`
    /// (its own connections), on SQLite sharing the one in-memory `Database`.
    func withStores(count: Int, _ body: ([OrderStore]) async throws -> Void) async throws {
        switch self {
        case .sqlite:
            let database = try await Database(path: ":memory:", migrations: OrderSchema.migrations)
            let stores = count == 1
                ? [OrderStore(database: database)]
                : (1...count).map { OrderStore(database: database, replicaID: "replica-\($0)") }
            try await Self.run(body, on: stores, closing: [database])
        case .postgresql:
            try await PostgreSQLServer.withDatabase { url in
                var stores: [OrderStore] = []
                for _ in 0..<count {
                    stores.append(try await OrderStore.open(location: .postgresql(url: url, schema: "orders")))
                }
                try await Self.run(body, on: stores, closing: stores.map(\.database))
            }
        }
    }

    /// Runs `body` on `stores`, then closes `databases` whatever `body` did.
    private static func run(
        _ body: ([OrderStore]) async throws -> Void, on stores: [OrderStore], closing databases: [Database]
    ) async throws {
        let outcome: Result<Void, any Error>
        do { outcome = .success(try await body(stores)) } catch { outcome = .failure(error) }
        for database in databases { await database.close() }
        try outcome.get()
    }
}

extension OrderStore {
    /// Claims `record`'s key for this store, as PlaceOrder does before writing its order (a
    /// claim already made is kept), then inserts the order: `insert` is fenced on the claim.
    func insertClaimed(_ record: OrderRecord, now: Int64 = Timestamp.now()) async throws {
        _ = try await claim(userID: record.userID, key: record.idempotencyKey, requestHash: "test", now: now)
        try await insert(record, now: now)
    }
}
