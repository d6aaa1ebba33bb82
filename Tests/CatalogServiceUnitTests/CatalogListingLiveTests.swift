@testable import catalog_svc
import Contracts
import Storage
import Testing

/// `CatalogStore` listing on each backend (SQLite `:memory:`, a PostgreSQL database): sorts,
/// search ranking, categories, and keyset paging that neither skips nor repeats products when
/// the catalog changes between pages — in the same order on both.
@Suite("Catalog listing on SQLite and PostgreSQL, live")
struct CatalogListingLiveTests {
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

    @Test("the seed has at least 20 products in at least 4 categories and loads only once", arguments: CatalogBackend.allCases)
    func seed(backend: CatalogBackend) async throws {
        try await backend.withStore { store async throws in
            #expect(SeedCatalog.products.count >= 20)
            #expect(try await store.categories().count >= 4)
            #expect(try await store.delete(id: 1))
            #expect(try await store.seedIfNeeded(with: SeedCatalog.products) == false)
            #expect(try await store.product(id: 1) == nil)
        }
    }

    @Test(
        "each sort orders the whole catalog, page by page, without gaps or repeats, ties by id",
        arguments: CatalogBackend.allCases, ProductSort.allCases)
    func sorts(backend: CatalogBackend, sort: ProductSort) async throws {
        try await backend.withStore { store async throws in
            // Ties in every key: the same price and rating as an existing product.
            var twin = SeedCatalog.products[3]
            twin.id = 0
            _ = try await store.upsert(twin)
            let products = try await walk(store, .init(sort: sort), size: 5)
            #expect(products.count == SeedCatalog.products.count + 1)
            let pairs = zip(products, products.dropFirst())
            switch sort {
            case .relevance: #expect(pairs.allSatisfy { $0.id < $1.id })
            case .priceAscending: #expect(pairs.allSatisfy { ($0.price.amount, $0.id) < ($1.price.amount, $1.id) })
            case .priceDescending: #expect(pairs.allSatisfy { ($1.price.amount, $0.id) < ($0.price.amount, $1.id) })
            case .rating:
                #expect(pairs.allSatisfy {
                    ($1.rating.rate, $1.rating.count, $0.id) < ($0.rating.rate, $0.rating.count, $1.id)
                })
            }
        }
    }

    @Test("the sorts give the same order on both backends", arguments: ProductSort.allCases)
    func sameOrderOnBothBackends(sort: ProductSort) async throws {
        var orders: [[Int]] = []
        for backend in CatalogBackend.allCases {
            orders.append(try await backend.withStore { store in try await walk(store, .init(sort: sort), size: 7).map(\.id) })
        }
        #expect(orders.count == 2 && orders[0] == orders[1])
    }

    @Test("categories ignore the case of ASCII letters only, and are listed by name", arguments: CatalogBackend.allCases)
    func categories(backend: CatalogBackend) async throws {
        try await backend.withStore(seeded: false) { store async throws in try await checkCategories(store) }
    }

    @Test("in a PostgreSQL database collated as English (ICU), categories still fold and sort as on SQLite")
    func categoriesUnderEnglishCollation() async throws {
        try await CatalogBackend.withPostgreSQLDatabase(collatedAs: "en") { url in
            try await CatalogBackend.withStore(at: url, seeded: false) { store async throws in try await checkCategories(store) }
        }
    }

    /// Checks, on an empty store, that categories differing in ASCII case only are one (named
    /// by the byte-wise first spelling), other letters' case counts, and names sort byte-wise.
    func checkCategories(_ store: CatalogStore) async throws {
        for category in ["Électronique", "électronique", "Books", "BOOKS", "art", "Zines"] {
            _ = try await store.upsert(CatalogSearchTests.product("A \(category) thing", category: category))
        }
        let listed = try await store.categories()
        #expect(listed.map(\.name) == ["art", "BOOKS", "Zines", "Électronique", "électronique"])
        #expect(listed.map(\.productCount) == [1, 2, 1, 1, 1])
        let books = try await store.listProducts(.init(category: "books", sort: .relevance), after: nil, limit: 10)
        #expect(books.total == 2)
        let accented = try await store.listProducts(.init(category: "ÉLECTRONIQUE", sort: .relevance), after: nil, limit: 10)
        #expect(accented.products.map(\.category) == ["Électronique"])
    }

    @Test("products added and removed while paging do not disturb the others", arguments: CatalogBackend.allCases)
    func stableWhileChanging(backend: CatalogBackend) async throws {
        try await backend.withStore { store async throws in
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
    }

    @Test(
        "a search matches word prefixes, ranks title matches first, pages exactly, and refuses query syntax",
        arguments: CatalogBackend.allCases)
    func search(backend: CatalogBackend) async throws {
        try await backend.withStore { store async throws in
            let results = try await walk(store, .init(search: SearchQuery.words(of: "Jack"), sort: .relevance), size: 2)
            #expect(!results.isEmpty && results.allSatisfy { $0.title.lowercased().contains("jacket") })
            // "cotton" is in titles and descriptions: title matches first, each part by id.
            let cotton = try await walk(store, .init(search: ["cotton"], sort: .relevance), size: 2)
            let rank = { (product: Product) in product.title.lowercased().contains("cotton") ? 0 : 1 }
            #expect(Set(cotton.map(rank)) == [0, 1])
            #expect(cotton.map(\.id) == cotton.sorted { (rank($0), $0.id) < (rank($1), $1.id) }.map(\.id))
            // Each would find the jackets if its syntax were taken as such.
            for syntax in ["zqx OR jacket", "jacket | zqx", "!zqx & jacket", "title:jacket NOT zqx", "'jacket':* <-> zqx"] {
                let words = SearchQuery.words(of: syntax)
                let page = try await store.listProducts(.init(search: words, sort: .relevance), after: nil, limit: 10)
                #expect(page.products.isEmpty && page.total == 0)
            }
            #expect(SearchQuery.expression(for: "title:foo OR \"bar") == #""title"* "foo"* "or"* "bar"*"#)
            #expect(SearchQuery.expression(for: "*** !!") == nil)
            let none = try await store.listProducts(.init(search: [], sort: .relevance), after: nil, limit: 10)
            #expect(none.products.isEmpty && none.total == 0)
        }
    }

    @Test(
        "a new product's id follows the largest usable one: a row past the id rule (from before it) does not stop creation",
        arguments: CatalogBackend.allCases)
    func nextIDIgnoresOversizedRows(backend: CatalogBackend) async throws {
        try await backend.withStore { store async throws in
            var product = SeedCatalog.products[0]
            product.id = 0
            // A deleted product's id is never given again.
            let (first, _) = try await store.upsert(product)
            #expect(try await store.delete(id: first.id))
            let (second, _) = try await store.upsert(product)
            #expect(second.id == first.id + 1)
            // Written as the rule now refuses, the way a catalog from before it may hold one: the
            // next id was max(id) + 1, a REAL past Int64.max, and every creation failed.
            product.id = Int.max
            _ = try await store.upsert(product)
            product.id = 0
            let (created, isNew) = try await store.upsert(product)
            #expect(isNew && created.id == second.id + 1)
        }
        var product = SeedCatalog.products[0]
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
