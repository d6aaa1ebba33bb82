import Contracts
import ServiceTestSupport
import Testing

/// What only catalog-svc's process shows of its seed catalog (API.md §4, README "Choices"):
/// `--no-seed` and `SHOP_CATALOG_NO_SEED=1`, and a restart that does not load it again.
@Suite("Seed catalog (live)")
struct SeedCatalogLiveTests {
    @Test("--no-seed or SHOP_CATALOG_NO_SEED=1 starts with an empty catalog", arguments: [CatalogSeeding.emptyByFlag, .emptyByEnvironment])
    func noSeed(seeding: CatalogSeeding) async throws {
        try await withLiveCatalogService(seeded: seeding) { stack in
            let page = try await stack.listProducts()
            #expect(page.products.isEmpty && page.totalSize == 0 && page.nextPageToken.isEmpty)
            #expect(try await stack.categories().isEmpty)
        }
    }

    @Test("the seed loads on the first start only: deleted products stay deleted after a restart")
    func seedOnlyOnce() async throws {
        try await withLiveCatalogService { stack in
            let before = try await stack.allProducts()
            let deleted = try #require(before.first)
            try await stack.delete(deleted.id)
            let added = try await stack.upsert(SampleProducts.make("Walnut desk organiser"))
            let status = try await stack.restartCatalog()
            #expect(status == 0, "SIGTERM ends catalog-svc with status 0")
            let after = try await stack.allProducts()
            #expect(after.count == before.count)
            #expect(!after.map(\.id).contains(deleted.id))
            #expect(after.contains(added))
        }
    }
}
