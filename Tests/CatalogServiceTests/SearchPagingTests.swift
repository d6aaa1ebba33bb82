import Contracts
import ServiceTestSupport
import Testing

/// Paging through ranked search results (README "Choices"): the ranking holds across page
/// boundaries, and keyset paging stays exact while the catalog changes — which a rank that
/// depends on the whole catalog, as bm25 does, could not promise.
@Suite("Search paging")
struct SearchPagingTests {
    /// `count` products naming "sprocket" in the title and `count` naming it only in the
    /// description, with descriptions of different lengths so that scores differ.
    static func sprockets(_ count: Int) -> [Product] {
        (0..<count).flatMap { index in
            let filler = String(repeating: "sturdy steel ", count: index % 4 + 1)
            return [
                SampleProducts.make("Sprocket model \(index)", description: "A part. \(filler)", category: "parts"),
                SampleProducts.make("Chain set \(index)", description: "Fits any sprocket. \(filler)", category: "parts"),
            ]
        }
    }

    /// `count` products that do not match "sprocket".
    static func unrelated(_ count: Int, stem: String) -> [Product] {
        (0..<count).map { SampleProducts.make("\(stem) \($0)", description: "Nothing to do with bicycles.", category: "misc") }
    }

    @Test("every title match comes before every description match, across pages", arguments: [1, 4, 7])
    func rankAcrossPages(pageSize: Int) async throws {
        try await withCatalogService(seeded: false) { stack in
            try await stack.importProducts(Self.sprockets(8))
            let found = try await stack.allProducts(ListProductsRequest(query: "sprocket"), pageSize: pageSize)
            #expect(found.count == 16 && Set(found.map(\.id)).count == 16)
            let titleMatches = found.prefix(8).filter { $0.title.hasPrefix("Sprocket") }
            #expect(titleMatches.count == 8, "\(found.map(\.title))")
        }
    }

    @Test(
        "paging a search while products are added and deleted neither repeats nor skips the other matches",
        arguments: [1, 150])
    func searchWhileCatalogChanges(unrelatedAdded: Int) async throws {
        try await withCatalogService(seeded: false) { stack in
            try await stack.importProducts(Self.sprockets(15) + Self.unrelated(60, stem: "Filler"))
            let original = try await stack.allProducts(ListProductsRequest(query: "sprocket"))
            #expect(original.count == 30)
            let first = try await stack.listProducts(ListProductsRequest(query: "sprocket", pageSize: 10))

            // New products would move every bm25 score; two matches come, one goes.
            try await stack.importProducts(Self.unrelated(unrelatedAdded, stem: "Ballast"))
            try await stack.upsert(SampleProducts.make("Sprocket newcomer", description: "Brand new."))
            try await stack.upsert(SampleProducts.make("Chain newcomer", description: "For a sprocket."))
            let deleted = original[25].id
            try await stack.delete(deleted)

            let rest = try await stack.allProducts(
                ListProductsRequest(query: "sprocket", pageToken: first.nextPageToken), pageSize: 10)
            let served = (first.products + rest).map(\.id)
            #expect(Set(served).count == served.count, "a match was served twice")
            let skipped = original.filter { $0.id != deleted && !served.contains($0.id) }.map(\.title)
            #expect(skipped.isEmpty, "skipped \(skipped.count) of \(original.count - 1) matches: \(skipped)")
            #expect(!served.contains(deleted))
        }
    }
}
