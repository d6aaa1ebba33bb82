import Contracts
import RPC
import ServiceTestSupport
import Testing

/// A real catalog-svc process answers its short reads (`Database.shortRead`) on the event loop
/// that holds the call: the loops mark their threads, and a handler that starts there reads
/// there — seen in `/metrics`.
@Suite("Short reads (catalog-svc process)")
struct ShortReadLiveTests {
    @Test("GetProduct and ListProducts are read on the event loop that holds the call; a product read once is answered from memory")
    func readsOnTheLoop() async throws {
        try await withServiceStack([.auth, .catalog]) { stack in
            let catalog = try stack.client(.catalog)
            let options = CallOptions(timeout: .seconds(10))
            for id in 1...5 { _ = try await catalog.unary(CatalogContract.getProduct, GetProductRequest(id: id), options: options) }
            let page = try await catalog.unary(CatalogContract.listProducts, ListProductsRequest(pageSize: 5), options: options)
            #expect(page.products.count == 5)
            let again = try await catalog.unary(CatalogContract.getProduct, GetProductRequest(id: 3), options: options)
            #expect(again.product == page.products.first { $0.id == 3 })
            let scrape = try await MetricsScrape.fetch(port: try stack.service(.catalog).port, http2: false)
            let onLoop = scrape.value("storage_short_reads_total{where=\"event_loop\"}") ?? 0
            if TestBackend.isPostgreSQL {
                #expect(onLoop == 0)  // a read over the network never runs on a loop
            } else {
                // One connection, on one loop: its first read opens the loop's connection while
                // it is read in the pool (the next may come before the opening finished); the
                // rest of the products and the page are read on the loop, and product 3 asked
                // again is not read at all.
                let inPool = scrape.value("storage_short_reads_total{where=\"reader_pool\"}") ?? 0
                #expect(onLoop >= 4)
                #expect(onLoop + inPool == 6)
                #expect(scrape.value("storage_short_read_overruns_total") == 0)
            }
        }
    }

    @Test(
        "--no-answer-cache or SHOP_CATALOG_ANSWER_CACHE=off reads every GetProduct anew",
        arguments: [(["--no-answer-cache"], [String: String]()), ([], ["SHOP_CATALOG_ANSWER_CACHE": "off"])])
    func noAnswerCache(arguments: [String], environment: [String: String]) async throws {
        try await withServiceStack(
            [.auth, .catalog], extraArguments: [.catalog: arguments], environment: [.catalog: environment]
        ) { stack in
            let catalog = try stack.client(.catalog)
            for _ in 0..<4 {
                _ = try await catalog.unary(CatalogContract.getProduct, GetProductRequest(id: 1), options: CallOptions(timeout: .seconds(10)))
            }
            let scrape = try await MetricsScrape.fetch(port: try stack.service(.catalog).port, http2: false)
            let reads = ["event_loop", "reader_pool"].compactMap { scrape.value("storage_short_reads_total{where=\"\($0)\"}") }
            if TestBackend.isPostgreSQL {
                #expect(reads.reduce(0, +) == 0)  // reads on PostgreSQL are not short reads
            } else {
                #expect(reads.reduce(0, +) == 4)  // each call read the product
            }
        }
    }
}
