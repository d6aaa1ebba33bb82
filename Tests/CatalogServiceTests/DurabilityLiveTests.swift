import Contracts
import ServiceTestSupport
import Testing

/// What catalog-svc keeps across a restart and a crash (README: WAL with `synchronous=FULL`,
/// "stock reservations must survive a crash"): every acknowledged write is there when the
/// process comes back, and reservations stay idempotent and releasable.
@Suite("Durability")
struct DurabilityLiveTests {
    @Test("acknowledged writes survive a restart, SIGTERM or SIGKILL", arguments: [false, true])
    func writesSurvive(crashing: Bool) async throws {
        try await withLiveCatalogService { stack in
            let session = try await stack.signedInUser("ada@example.com")
            let product = try await stack.upsert(SampleProducts.make("Durable anvil", stock: 10))
            try await stack.addFavorite(product.id, as: session)
            try await stack.reserve("order-1", [(product.id, 3)])
            try await stack.restartCatalog(crashing: crashing)

            #expect(try await stack.product(product.id).stock == 7)
            #expect(try await stack.favoriteIDs(of: session) == [product.id])
            // The reservation is remembered: repeating it reserves nothing, releasing it gives
            // its units back once.
            try await stack.reserve("order-1", [(product.id, 3)])
            #expect(try await stack.product(product.id).stock == 7)
            try await stack.release("order-1")
            try await stack.release("order-1")
            #expect(try await stack.product(product.id).stock == 10)
        }
    }

    @Test("a session's access token still works after catalog-svc restarts")
    func tokensAfterRestart() async throws {
        try await withLiveCatalogService { stack in
            let session = try await stack.signedInUser("ada@example.com")
            try await stack.restartCatalog()
            #expect(try await stack.favoriteIDs(of: session).isEmpty)
        }
    }

    @Test("a page token stays valid when catalog-svc restarts")
    func tokenSurvivesRestart() async throws {
        try await withLiveCatalogService { stack in
            let everything = try await stack.allProducts()
            let first = try await stack.listProducts(ListProductsRequest(sort: .priceAscending, pageSize: 10))
            try await stack.restartCatalog()
            let rest = try await stack.allProducts(ListProductsRequest(sort: .priceAscending, pageToken: first.nextPageToken))
            #expect(Set((first.products + rest).map(\.id)) == Set(everything.map(\.id)))
            #expect(first.products.count + rest.count == everything.count)
        }
    }
}
