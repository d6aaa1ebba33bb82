import Contracts
import InProcessServices
import ServiceTestSupport
import Testing

/// catalog-svc keeps the answers of GetProduct and ListProducts (`CatalogAnswerCache`): a
/// repeated read is answered from memory, and every product write is seen by the reads that
/// follow it — whether it changed a product's text, its stock, or removed it.
@Suite("Catalog answer cache")
struct AnswerCacheTests {
    @Test("a product or a listing asked again is answered without reading the database")
    func repeatedReadsFromMemory() async throws {
        try await withCatalogService { stack in
            func reads() throws -> Double {
                let metrics = try stack.metrics(of: .catalog)
                return ["event_loop", "reader_pool"].compactMap { metrics.value("storage_short_reads_total{where=\"\($0)\"}") }
                    .reduce(0, +)
            }
            _ = try await stack.product(1)
            _ = try await stack.listProducts(ListProductsRequest(query: "jacket"))
            let before = try reads()
            for _ in 0..<3 {
                _ = try await stack.product(1)
                _ = try await stack.listProducts(ListProductsRequest(query: "jacket"))
            }
            #expect(try reads() == before)
            _ = try await stack.product(2)
            #expect(try reads() == (TestBackend.isPostgreSQL ? before : before + 1))
        }
    }

    @Test("GetProduct and ListProducts asked again after a product changed see the change")
    func writesAreSeen() async throws {
        try await withCatalogService(seeded: false) { stack in
            let ids = try await StockTests.stocked(stack, [5, 5])
            let listing = ListProductsRequest(sort: .priceAscending)
            for _ in 0..<2 {
                #expect(try await stack.listProducts(listing).products.map(\.stock) == [5, 5])
                #expect(try await stack.product(ids[0]).stock == 5)
            }

            try await stack.reserve("order-1", [(ids[0], 2)])
            #expect(try await stack.product(ids[0]).stock == 3)
            #expect(try await stack.listProducts(listing).products.map(\.stock) == [3, 5])

            var renamed = try await stack.product(ids[1])
            renamed.title = "Renamed item"
            _ = try await stack.upsert(renamed)
            #expect(try await stack.product(ids[1]).title == "Renamed item")
            #expect(try await stack.listProducts(listing).products.map(\.title).contains("Renamed item"))

            try await stack.release("order-1")
            #expect(try await stack.product(ids[0]).stock == 5)

            try await stack.delete(ids[0])
            await #expect(throws: (any Error).self) { try await stack.product(ids[0]) }
            #expect(try await stack.listProducts(listing).products.map(\.id) == [ids[1]])
        }
    }
}
