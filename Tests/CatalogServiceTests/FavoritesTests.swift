import Contracts
import RPC
import ServiceTestSupport
import Testing

/// Favorites (API.md §4, README "Choices"): per user, `AddFavorite` and `RemoveFavorite`
/// idempotent, `ListFavorites` paged newest first, nobody sees another user's list, and a
/// deleted product leaves every list.
@Suite("Favorites")
struct FavoritesTests {
    @Test("adding a favorite twice lists it once")
    func addIsIdempotent() async throws {
        try await withCatalogService { stack in
            let session = try await stack.signedInUser("ada@example.com")
            let product = try #require(try await stack.allProducts().first)
            try await stack.addFavorite(product.id, as: session)
            try await stack.addFavorite(product.id, as: session)
            let page = try await stack.favorites(of: session)
            #expect(page.products == [product])
            #expect(page.nextPageToken.isEmpty)
        }
    }

    @Test("the same favorite added many times at once is listed once")
    func concurrentAdds() async throws {
        try await withCatalogService { stack in
            let session = try await stack.signedInUser("ada@example.com")
            let product = try #require(try await stack.allProducts().first)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<12 {
                    group.addTask { try await stack.addFavorite(product.id, as: session) }
                }
                try await group.waitForAll()
            }
            #expect(try await stack.favoriteIDs(of: session) == [product.id])
        }
    }

    @Test("AddFavorite of an unknown product is PRODUCT_NOT_FOUND and adds nothing", arguments: [999_999, Int(Int32.max)])
    func addUnknown(productId: Int) async throws {
        try await withCatalogService { stack in
            let session = try await stack.signedInUser("ada@example.com")
            await expectRPCError(CatalogReason.productNotFound) { try await stack.addFavorite(productId, as: session) }
            #expect(try await stack.favoriteIDs(of: session).isEmpty)
        }
    }

    @Test("removing a favorite twice, or one never added, or an unknown product, answers {}")
    func removeIsIdempotent() async throws {
        try await withCatalogService { stack in
            let session = try await stack.signedInUser("ada@example.com")
            let ids = try await stack.allProducts().map(\.id)
            try await stack.addFavorite(ids[0], as: session)
            try await stack.addFavorite(ids[1], as: session)
            try await stack.removeFavorite(ids[0], as: session)
            try await stack.removeFavorite(ids[0], as: session)
            try await stack.removeFavorite(ids[2], as: session)
            try await stack.removeFavorite(999_999, as: session)
            #expect(try await stack.favoriteIDs(of: session) == [ids[1]])
        }
    }

    @Test("ListFavorites pages newest first", arguments: [1, 2, 3, 20])
    func newestFirst(pageSize: Int) async throws {
        try await withCatalogService { stack in
            let session = try await stack.signedInUser("ada@example.com")
            let ids = try await stack.allProducts().map(\.id)
            let added = [ids[5], ids[1], ids[9], ids[0], ids[3], ids[7], ids[2]]
            for id in added { try await stack.addFavorite(id, as: session) }
            let first = try await stack.favorites(of: session, pageSize: pageSize)
            #expect(first.products.count == min(pageSize, added.count))
            #expect(first.nextPageToken.isEmpty == (pageSize >= added.count))
            #expect(try await stack.favoriteIDs(of: session, pageSize: pageSize) == added.reversed())
        }
    }

    @Test("favorites added or removed between pages are neither repeated nor skipped among the rest")
    func pagingWhileFavoritesChange() async throws {
        try await withCatalogService { stack in
            let session = try await stack.signedInUser("ada@example.com")
            let ids = try await stack.allProducts().map(\.id)
            let added = Array(ids.prefix(9))
            for id in added { try await stack.addFavorite(id, as: session) }
            let first = try await stack.favorites(of: session, pageSize: 3)
            #expect(first.products.map(\.id) == [added[8], added[7], added[6]])

            try await stack.addFavorite(ids[20], as: session)
            try await stack.removeFavorite(added[2], as: session)
            var served = first.products.map(\.id)
            var token = first.nextPageToken
            while !token.isEmpty, served.count < 20 {
                let page = try await stack.favorites(of: session, pageSize: 3, pageToken: token)
                served += page.products.map(\.id)
                token = page.nextPageToken
            }
            #expect(served == [added[8], added[7], added[6], added[5], added[4], added[3], added[1], added[0]])
        }
    }

    @Test("ListFavorites without pageSize serves 20, and a negative pageSize is INVALID_ARGUMENT")
    func favoritesPageSize() async throws {
        try await withCatalogService { stack in
            let session = try await stack.signedInUser("ada@example.com")
            let ids = try await stack.allProducts().map(\.id)
            for id in ids.prefix(22) { try await stack.addFavorite(id, as: session) }
            let first = try await stack.favorites(of: session)
            #expect(first.products.count == 20 && !first.nextPageToken.isEmpty)
            let error = await expectRPCError(.invalidArgument, reason: nil) { try await stack.favorites(of: session, pageSize: -1) }
            #expect(error?.namesField("pageSize") == true, "\(error?.violatedFields ?? [])")
        }
    }

    @Test("one user never sees or changes another user's favorites")
    func usersAreSeparate() async throws {
        try await withCatalogService { stack in
            let ada = try await stack.signedInUser("ada@example.com")
            let bob = try await stack.signedInUser("bob@example.com")
            let ids = try await stack.allProducts().map(\.id)
            try await stack.addFavorite(ids[0], as: ada)
            try await stack.addFavorite(ids[1], as: ada)
            try await stack.addFavorite(ids[2], as: bob)
            try await stack.removeFavorite(ids[0], as: bob)
            #expect(try await stack.favoriteIDs(of: ada) == [ids[1], ids[0]])
            #expect(try await stack.favoriteIDs(of: bob) == [ids[2]])
            // A second session of the same user sees the same list.
            let adaElsewhere = try await stack.signIn("ada@example.com")
            #expect(try await stack.favoriteIDs(of: adaElsewhere) == [ids[1], ids[0]])
        }
    }

    @Test("a product deleted and created again under its id does not come back as a favorite")
    func recreatedProduct() async throws {
        try await withCatalogService { stack in
            let session = try await stack.signedInUser("ada@example.com")
            var product = SampleProducts.make("Phoenix figurine")
            product.id = 60_000
            try await stack.upsert(product)
            try await stack.addFavorite(product.id, as: session)
            try await stack.delete(product.id)
            try await stack.upsert(product)
            #expect(try await stack.favoriteIDs(of: session).isEmpty)
        }
    }

    @Test("a deleted product leaves every favorites list, and an updated one shows its new data")
    func deletedAndUpdatedProducts() async throws {
        try await withCatalogService { stack in
            let ada = try await stack.signedInUser("ada@example.com")
            let bob = try await stack.signedInUser("bob@example.com")
            let doomed = try await stack.upsert(SampleProducts.make("Doomed vase"))
            var renamed = try await stack.upsert(SampleProducts.make("Plain mug"))
            for session in [ada, bob] {
                try await stack.addFavorite(renamed.id, as: session)
                try await stack.addFavorite(doomed.id, as: session)
            }
            try await stack.delete(doomed.id)
            renamed.title = "Speckled mug"
            renamed.price.amount = 1_250
            try await stack.upsert(renamed)
            for session in [ada, bob] {
                let page = try await stack.favorites(of: session)
                #expect(page.products == [renamed])
            }
        }
    }
}
