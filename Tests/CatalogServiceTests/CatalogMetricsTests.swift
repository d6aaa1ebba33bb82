import Contracts
import InProcessServices
import ServiceTestSupport
import Testing

/// catalog-svc's domain metrics (issue 31): stock reservations given back, each counted once.
@Suite("Catalog metrics")
struct CatalogMetricsTests {
    /// The series counting reservations given back.
    static let released = "catalog_reservations_released_total"

    @Test("a release that gives stock back counts once; repeating it or releasing an unknown id counts nothing")
    func releasesCountedOnce() async throws {
        try await withCatalogService(seeded: false) { stack in
            let ids = try await StockTests.stocked(stack, [5])
            try await stack.reserve("order-1", [(ids[0], 2)])
            try await stack.reserve("order-2", [(ids[0], 1)])
            #expect(try stack.metrics(of: .catalog).value(Self.released) == 0)

            try await stack.release("order-1")
            try await stack.release("order-1")
            try await stack.release("never-reserved")
            #expect(try stack.metrics(of: .catalog).value(Self.released) == 1)
            #expect(try await StockTests.levels(stack, ids) == [4])

            try await stack.release("order-2")
            #expect(try stack.metrics(of: .catalog).value(Self.released) == 2)
        }
    }
}
