import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// The catalog catalog-svc ships (API.md §4, README "Choices"): loaded on the first start only,
/// at least 20 products in at least 4 categories, prices in USD cents, and `ListCategories`
/// agreeing with `ListProducts`.
@Suite("Seed catalog and categories")
struct SeedCatalogTests {
    /// The categories the README names for the seed.
    static let seedCategories = ["electronics", "jewelery", "men's clothing", "women's clothing"]

    @Test("a first start serves the README's 24 seed products in its 4 categories")
    func seedSize() async throws {
        try await withCatalogService { stack in
            let page = try await stack.listProducts()
            #expect(page.totalSize >= 20, "API.md asks for at least 20")
            #expect(page.totalSize == 24)
            let products = try await stack.allProducts()
            #expect(products.count == page.totalSize)
            #expect(Set(products.map(\.id)).count == products.count, "ids are unique")
            #expect(Set(products.map(\.category)) == Set(Self.seedCategories))
        }
    }

    @Test("every seed product is complete: a title, USD cents, a rating in 0...5, stock")
    func seedProductsAreValid() async throws {
        try await withCatalogService { stack in
            for product in try await stack.allProducts() {
                #expect(product.id > 0)
                #expect(!product.title.isEmpty && !product.description.isEmpty, "\(product.id)")
                #expect(product.price.currency == "USD" && product.price.amount > 0, "\(product.id) \(product.price)")
                #expect((0...5).contains(product.rating.rate) && product.rating.count >= 0, "\(product.id)")
                #expect(product.stock >= 0, "\(product.id)")
                #expect(product.image.hasPrefix("http://") || product.image.hasPrefix("https://"), "\(product.image)")
            }
        }
    }

    @Test("ListCategories lists every category by name and its counts add up to totalSize")
    func categoriesAddUp() async throws {
        try await withCatalogService { stack in
            let categories = try await stack.categories()
            #expect(categories.map(\.name) == categories.map(\.name).sorted())
            #expect(categories.count >= 4)
            #expect(categories.allSatisfy { $0.productCount > 0 })
            let total = try await stack.listProducts().totalSize
            #expect(categories.map(\.productCount).reduce(0, +) == total)
            for category in categories {
                let page = try await stack.listProducts(ListProductsRequest(category: category.name))
                #expect(page.totalSize == category.productCount, "\(category.name)")
            }
        }
    }

    @Test("a category appears with its first product and disappears with its last")
    func categoryFollowsProducts() async throws {
        try await withCatalogService { stack in
            let lamp = try await stack.upsert(SampleProducts.make("Brass reading lamp", category: "lighting"))
            #expect(try await stack.categories().contains(Category(name: "lighting", productCount: 1)))
            try await stack.delete(lamp.id)
            #expect(try await !stack.categories().map(\.name).contains("lighting"))
        }
    }

    @Test("Describe lists the 12 methods of CatalogService with their kinds and auth levels")
    func describe() async throws {
        try await withCatalogService { stack in
            let response = try await stack.catalogClient.unary(MetaContract.describe, Empty(), options: stack.plain())
            let service = try #require(response.services.first { $0.name == CatalogContract.service })
            let served = service.methods.map { "\($0.name) \($0.kind.rawValue) \($0.auth.rawValue)" }
            let expected = CatalogContract.all.map { "\($0.method) \($0.kind.rawValue) \($0.auth.rawValue)" }
            #expect(served.sorted() == expected.sorted())
        }
    }
}
