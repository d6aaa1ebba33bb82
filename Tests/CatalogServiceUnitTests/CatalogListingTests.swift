@testable import catalog_svc
import Contracts
import Storage
import Testing

/// `CatalogStore` listing on `:memory:`: sorts, search ranking, and keyset paging that neither
/// skips nor repeats products when the catalog changes between pages.
@Suite("Catalog listing")
struct CatalogListingTests {
    /// A store holding the seed catalog.
    func seededStore() async throws -> CatalogStore {
        let store = CatalogStore(database: try await Database(path: ":memory:", migrations: CatalogSchema.migrations))
        try await store.seedIfNeeded(with: SeedCatalog.products)
        return store
    }

    /// Every product of `filter`, page by page of `size`, running `between` after each page.
    func walk(
        _ store: CatalogStore, _ filter: CatalogStore.ProductFilter, size: Int,
        between: (Int) async throws -> Void = { _ in }
    ) async throws -> [Product] {
        var all: [Product] = []
        var cursor: CatalogStore.ProductCursor?
        var page = 0
        repeat {
            let result = try await store.listProducts(filter, after: cursor, limit: size)
            all += result.products
            cursor = result.next
            try await between(page)
            page += 1
        } while cursor != nil
        return all
    }

    @Test("the seed has at least 20 products in at least 4 categories and loads only once")
    func seed() async throws {
        let store = try await seededStore()
        #expect(SeedCatalog.products.count >= 20)
        #expect(try await store.categories().count >= 4)
        #expect(try await store.delete(id: 1))
        #expect(try await store.seedIfNeeded(with: SeedCatalog.products) == false)
        #expect(try await store.product(id: 1) == nil)
    }

    @Test("each sort orders the whole catalog, page by page, without gaps or repeats", arguments: ProductSort.allCases)
    func sorts(sort: ProductSort) async throws {
        let store = try await seededStore()
        let products = try await walk(store, .init(sort: sort), size: 5)
        #expect(products.count == SeedCatalog.products.count)
        #expect(Set(products.map(\.id)).count == products.count)
        let pairs = zip(products, products.dropFirst())
        switch sort {
        case .relevance: #expect(pairs.allSatisfy { $0.id < $1.id })
        case .priceAscending: #expect(pairs.allSatisfy { $0.price.amount <= $1.price.amount })
        case .priceDescending: #expect(pairs.allSatisfy { $0.price.amount >= $1.price.amount })
        case .rating: #expect(pairs.allSatisfy { $0.rating.rate >= $1.rating.rate })
        }
    }

    @Test("products added and removed while paging do not disturb the others")
    func stableWhileChanging() async throws {
        let store = try await seededStore()
        let before = Set(SeedCatalog.products.map(\.id))
        let seen = try await walk(store, .init(sort: .priceAscending), size: 4) { page in
            guard page == 1 else { return }
            _ = try await store.upsert(
                Product(
                    title: "Bargain Bin Socks", description: "", category: "men's clothing",
                    price: Money(amount: 1, currency: "USD"), image: "", rating: Rating(rate: 1, count: 1), stock: 1))
            _ = try await store.delete(id: 24)
        }
        let ids = seen.map(\.id)
        #expect(Set(ids).count == ids.count, "no product appears twice")
        #expect(before.subtracting([24]).isSubset(of: Set(ids)), "every product that stayed is listed")
    }

    @Test("a search matches word prefixes, ranks title matches first, and refuses FTS syntax")
    func search() async throws {
        let store = try await seededStore()
        let expression = try #require(SearchQuery.expression(for: "Jack"))
        let results = try await walk(store, .init(search: expression, sort: .relevance), size: 2)
        #expect(!results.isEmpty && results.allSatisfy { $0.title.lowercased().contains("jacket") })
        #expect(SearchQuery.expression(for: "title:foo OR \"bar") == #""title"* "foo"* "or"* "bar"*"#)
        #expect(SearchQuery.expression(for: "*** !!") == nil)
        let none = try await store.listProducts(.init(search: "\"zzzz\"*", sort: .relevance), after: nil, limit: 10)
        #expect(none.products.isEmpty && none.total == 0)
    }

    @Test("a new product's id follows the largest usable one: a row past the id rule (from before it) does not stop creation")
    func nextIDIgnoresOversizedRows() async throws {
        let store = try await seededStore()
        var product = SeedCatalog.products[0]
        // Written as the rule now refuses, the way a catalog from before it may hold one: the
        // next id was max(id) + 1, a REAL past Int64.max, and every creation failed.
        product.id = Int.max
        _ = try await store.upsert(product)
        product.id = 0
        let (created, isNew) = try await store.upsert(product)
        #expect(isNew && created.id == SeedCatalog.products.map(\.id).max()! + 1)
        product.id = ProductValidation.maximumID + 1
        #expect(ProductValidation.problems(with: product).first?.field == "product.id")
        product.id = ProductValidation.maximumID
        #expect(ProductValidation.problems(with: product).isEmpty)
    }

    @Test("invalid products name the field at fault")
    func rules() {
        let good = SeedCatalog.products[0]
        #expect(ProductValidation.problems(with: good).isEmpty)
        var bad = good
        bad.price = Money(amount: -1, currency: "USD")
        #expect(ProductValidation.problems(with: bad).first?.field == "product.price.amount")
        // A price no basket of 100 lines of 10 could total: order-svc's line total overflowed.
        bad.price = Money(amount: Money.maximumUnitAmount + 1, currency: "USD")
        #expect(ProductValidation.problems(with: bad).first?.field == "product.price.amount")
        bad.price = Money(amount: Money.maximumUnitAmount, currency: "USD")
        #expect(ProductValidation.problems(with: bad).isEmpty)
        bad = good
        bad.image = "ftp://example.com/x.png"
        #expect(ProductValidation.problems(with: bad).first?.field == "product.image")
        bad = good
        bad.rating = Rating(rate: 5.5, count: 1)
        #expect(ProductValidation.problems(with: bad).first?.field == "product.rating.rate")
    }
}
