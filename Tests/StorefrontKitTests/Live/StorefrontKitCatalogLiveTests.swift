import Contracts
import Foundation
import RPC
import ServiceTestSupport
@testable import StorefrontKit
import Testing

/// Every method of `client.catalog` against the debug gateway and services (processes), over
/// Connect on HTTP/1.1: the seed catalog paged, searched and filtered, single products, the
/// product page and home signed out and in, favorites; errors as ``StorefrontError`` reasons.
@Suite("StorefrontKit catalog, live")
struct StorefrontKitCatalogLiveTests {
    @Test("Paging the whole seed catalog, by category, sorted and searched: every product once, as many as totalSize")
    func listingsAndSearch() async throws {
        try await withKitStack { kit in
            let catalog = try kit.client().catalog
            let pages = try await catalog.products(pageSize: 7).all()
            let products = pages.flatMap(\.products)
            let total = try #require(pages.first?.totalSize)
            #expect(pages.count > 1, "the seed catalog spans several pages of 7")
            #expect(pages.allSatisfy { $0.products.count <= 7 && $0.totalSize == total })
            #expect(products.count == total)
            #expect(Set(products.map(\.id)).count == products.count, "a product listed twice")

            let categories = try await catalog.categories()
            #expect(categories.count >= 4)
            #expect(categories.map(\.productCount).reduce(0, +) == total)
            let category = try #require(categories.first)
            let inCategory = try await catalog.products(category: category.name, pageSize: 3).all().flatMap(\.products)
            #expect(inCategory.count == category.productCount)
            #expect(inCategory.allSatisfy { $0.category == category.name })

            let cheapestFirst = try await catalog.products(sort: .priceAscending, pageSize: 100).all().flatMap(\.products)
            #expect(cheapestFirst.map(\.price.amount) == cheapestFirst.map(\.price.amount).sorted())
            #expect(Set(cheapestFirst.map(\.id)) == Set(products.map(\.id)))

            // A word of a product's title finds it; every hit has the word in its title or description.
            let (sought, word) = try #require(products.compactMap { product in Self.word(of: product.title).map { (product, $0) } }.last)
            let hits = try await catalog.search(word, pageSize: 5).all()
            let found = hits.flatMap(\.products)
            #expect(found.contains { $0.id == sought.id })
            #expect(found.count == hits.first?.totalSize)
            #expect(found.allSatisfy { "\($0.title) \($0.description)".lowercased().contains(word) })
            #expect(found.count < total)
            let nothing = try await catalog.search("zzqxv").all()
            #expect(nothing.count == 1 && nothing[0].products.isEmpty && nothing[0].totalSize == 0)

            // The reason of a page token the catalog did not issue.
            await expectReason(.invalidPageToken, .invalidArgument) {
                _ = try await kit.client().calls.anonymous(CatalogContract.listProducts, ListProductsRequest(pageToken: "not-a-token"))
            }
        }
    }

    @Test("product, products(ids:) with missing ids, productPage and home signed out and in, favorites added, paged and removed")
    func productsPagesAndFavorites() async throws {
        try await withKitStack { kit in
            let client = try kit.client()
            let catalog = client.catalog
            let first = try await catalog.products(pageSize: 4).all()[0].products
            #expect(first.count == 4)
            #expect(try await catalog.product(id: first[0].id) == first[0])
            await expectReason(.productNotFound, .notFound) { _ = try await catalog.product(id: 987_654) }
            let batch = try await catalog.products(ids: [first[2].id, 987_654, first[0].id])
            #expect(batch.products.map(\.id) == [first[2].id, first[0].id])
            #expect(batch.missingIDs == [987_654])

            // Signed out: no favorite, no basket line, an empty basket on the home screen.
            let anonymous = try await catalog.productPage(id: first[1].id)
            #expect(anonymous.product == first[1] && !anonymous.isFavorite && anonymous.basketItem == nil)
            await expectReason(.productNotFound, .notFound) { _ = try await catalog.productPage(id: 987_654) }
            let anonymousHome = try await catalog.home(pageSize: 4)
            #expect(anonymousHome.categories == (try await catalog.categories()))
            #expect(anonymousHome.products == first && anonymousHome.basketItemCount == 0 && !anonymousHome.nextPageToken.isEmpty)
            await expectReason(.missingToken, .unauthenticated) { _ = try await catalog.favorites().all() }
            await expectReason(.missingToken, .unauthenticated) { try await catalog.addFavorite(productID: first[0].id) }

            _ = try await kit.signedInUser(client)
            #expect(try await catalog.favorites().all() == [[]])
            for product in first.prefix(3) { try await catalog.addFavorite(productID: product.id) }
            try await catalog.addFavorite(productID: first[1].id)  // again: nothing changes
            await expectReason(.productNotFound, .notFound) { try await catalog.addFavorite(productID: 987_654) }
            let favoritePages = try await catalog.favorites(pageSize: 2).all()
            #expect(favoritePages.map(\.count) == [2, 1])
            #expect(Set(favoritePages.joined().map(\.id)) == Set(first.prefix(3).map(\.id)))
            try await catalog.removeFavorite(productID: first[0].id)
            try await catalog.removeFavorite(productID: first[3].id)  // never a favorite: nothing happens
            #expect(Set(try await catalog.favorites().all().joined().map(\.id)) == [first[1].id, first[2].id])

            // Signed in: the favorite flag and the basket line.
            try await KitStack.addToBasket(client, productID: first[1].id, count: 2)
            let page = try await catalog.productPage(id: first[1].id)
            #expect(page.product == first[1] && page.isFavorite)
            #expect(page.basketItem?.productId == first[1].id && page.basketItem?.count == 2)
            let other = try await catalog.productPage(id: first[0].id)
            #expect(!other.isFavorite && other.basketItem == nil)
            let home = try await catalog.home(category: first[1].category, pageSize: 2)
            #expect(home.basketItemCount == 2)
            #expect(home.products.allSatisfy { $0.category == first[1].category } && home.products.count <= 2)
            await client.close()
        }
    }

    /// A word of `title` to search for: four letters or more, lower-cased.
    static func word(of title: String) -> String? {
        title.split(separator: " ").first { $0.count >= 4 && $0.allSatisfy(\.isLetter) }.map { $0.lowercased() }
    }
}
