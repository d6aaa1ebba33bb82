@testable import basket_svc
import Foundation
import ServiceTestSupport
import Storage

/// The backends the store suites run on: SQLite (in memory) and PostgreSQL (a database of
/// the test's own on ``PostgreSQLServer``'s shared server), whatever `STOREFRONT_TEST_BACKEND`
/// says.
let storeBackends: [SQLDialect] = [.sqlite, .postgresql]

/// Runs `body` with a new, migrated basket store on `backend`, closed (and on PostgreSQL its
/// database dropped) afterwards.
func withBasketStore<Result>(_ backend: SQLDialect, _ body: (BasketStore) async throws -> Result) async throws -> Result {
    switch backend {
    case .sqlite:
        return try await withBasketStore(at: .sqlite(path: ":memory:"), body)
    case .postgresql:
        return try await PostgreSQLServer.withDatabase { url in
            try await withBasketStore(at: .postgresql(url: url, schema: "basket"), body)
        }
    }
}

/// Runs `body` with two basket stores — two replicas, each with its own `Database` and pool —
/// on one new PostgreSQL database, closed afterwards.
func withReplicaStores<Result>(_ body: (BasketStore, BasketStore) async throws -> Result) async throws -> Result {
    try await PostgreSQLServer.withDatabase { url in
        try await withBasketStore(at: .postgresql(url: url, schema: "basket")) { first in
            try await withBasketStore(at: .postgresql(url: url, schema: "basket")) { second in
                try await body(first, second)
            }
        }
    }
}

/// Runs `body` with the store opened at `location`, closing it whether `body` succeeded or not.
func withBasketStore<Result>(
    at location: DatabaseLocation, _ body: (BasketStore) async throws -> Result
) async throws -> Result {
    let store = try await BasketStore.open(location: location)
    let outcome: Swift.Result<Result, any Error>
    do { outcome = .success(try await body(store)) } catch { outcome = .failure(error) }
    await store.database.close()
    return try outcome.get()
}

extension LineRecord {
    /// A line of `count` units of `productID` at `unitAmount` minor units of `currency`, with
    /// a fresh item id.
    static func sample(
        _ productID: Int, count: Int = 1, unitAmount: Int = 1_250, currency: String = "USD", title: String? = nil
    ) -> LineRecord {
        LineRecord(
            id: UUID().uuidString.lowercased(), productID: productID, title: title ?? "Product \(productID)",
            unitAmount: unitAmount, currency: currency, imageURL: "https://img.test/\(productID).png", count: count)
    }
}

/// The outcomes of `contenders` concurrent calls of `change` (given each contender's index).
func concurrentOutcomes<Value: Sendable>(
    _ contenders: Int, _ change: @escaping @Sendable (Int) async throws -> Value
) async -> [Result<Value, any Error>] {
    await withTaskGroup(of: Result<Value, any Error>.self) { group in
        for index in 0..<contenders {
            group.addTask {
                do { return .success(try await change(index)) } catch { return .failure(error) }
            }
        }
        return await group.reduce(into: []) { $0.append($1) }
    }
}
