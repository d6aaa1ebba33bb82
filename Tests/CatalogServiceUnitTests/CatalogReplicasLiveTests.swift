@testable import catalog_svc
import Contracts
import ServiceTestSupport
import Storage
import Testing

/// Replicas on one PostgreSQL database: two stores (as two catalog-svc replicas) on the schema
/// `catalog` reserve and release the same stock at once, and each sees the other's changes to
/// the catalog's words.
@Suite("Catalog replicas on one PostgreSQL database, live")
struct CatalogReplicasLiveTests {
    /// Runs `body` with two stores on one fresh database, closed afterwards.
    func withReplicas<Value>(_ body: ([CatalogStore]) async throws -> Value) async throws -> Value {
        try await CatalogBackend.withPostgreSQLDatabase(stores: 2) { url in
            try await CatalogBackend.withStore(at: url) { first async throws in
                try await CatalogBackend.withStore(at: url) { second async throws in try await body([first, second]) }
            }
        }
    }

    @Test("replicas racing for the last units reserve exactly the stock, and each reservation id once")
    func racingReservations() async throws {
        try await withReplicas { replicas in
            var product = CatalogSearchTests.product("Last few mugs")
            product.stock = 10
            let (stored, _) = try await replicas[0].upsert(product)
            // 40 attempts of one unit each on 20 ids (each id twice, once on each replica).
            let outcomes = try await withThrowingTaskGroup(of: CatalogStore.ReservationOutcome.self) { group in
                for attempt in 0..<40 {
                    group.addTask {
                        try await replicas[attempt % 2].reserve(reservationID: "order-\(attempt / 2)", counts: [stored.id: 1])
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let stock = try await replicas[1].product(id: stored.id)?.stock
            let reservations = try await replicas[1].database.read { connection in
                try connection.queryValue("SELECT count(*) FROM reservations", as: Int.self)
            }
            #expect(stock == 0)
            #expect(reservations == 10, "ten ids got the ten units; none twice")
            #expect(outcomes.filter { $0 == .reserved }.count == 20, "each of the ten ids answers reserved on both replicas")
            #expect(outcomes.filter { if case .outOfStock = $0 { true } else { false } }.count == 20)
        }
    }

    @Test("releasing on one replica while the other releases too gives the stock back once")
    func racingReleases() async throws {
        try await withReplicas { replicas in
            var product = CatalogSearchTests.product("Teapot")
            product.stock = 5
            let (stored, _) = try await replicas[0].upsert(product)
            #expect(try await replicas[0].reserve(reservationID: "order-1", counts: [stored.id: 3]) == .reserved)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for attempt in 0..<10 {
                    group.addTask { try await replicas[attempt % 2].release(reservationID: "order-1") }
                }
                try await group.waitForAll()
            }
            #expect(try await replicas[1].product(id: stored.id)?.stock == 5)
        }
    }

    @Test("a replica's suggestions follow products written and deleted by another")
    func suggestionsFollowOtherReplicas() async throws {
        try await withReplicas { replicas in
            #expect(try await replicas[1].suggestion(for: ["kaleidoscpoe"], category: nil) == nil)  // read and kept
            let (added, _) = try await replicas[0].upsert(CatalogSearchTests.product("Brass kaleidoscope"))
            #expect(try await replicas[1].suggestion(for: ["kaleidoscpoe"], category: nil) == "kaleidoscope")
            #expect(try await replicas[0].delete(id: added.id))
            #expect(try await replicas[1].suggestion(for: ["kaleidoscpoe"], category: nil) == nil)
        }
    }
}
