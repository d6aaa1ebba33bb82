@testable import catalog_svc
import Contracts
import Foundation
import Storage
import Testing

/// `CatalogStore` search on `:memory:` and on files: words inside CJK runs, spelling
/// suggestions from the catalog's vocabulary, and the upgrade of a catalog indexed the old way.
@Suite("Catalog search: CJK words, suggestions, index migration")
struct CatalogSearchTests {
    /// A store holding the seed catalog and `extra`.
    func store(with extra: [Product] = []) async throws -> CatalogStore {
        let store = CatalogStore(database: try await Database(path: ":memory:", migrations: CatalogSchema.migrations))
        try await store.seedIfNeeded(with: SeedCatalog.products)
        for product in extra { _ = try await store.upsert(product) }
        return store
    }

    /// A new product titled `title`, described by `description`.
    static func product(_ title: String, description: String = "", category: String = "kitchen") -> Product {
        Product(
            title: title, description: description, category: category, price: Money(amount: 1_200, currency: "JPY"),
            image: "", rating: Rating(rate: 4, count: 3), stock: 5)
    }

    /// Japanese products whose words are inside longer runs of characters.
    static let japanese = [
        product("伝統的な湯呑みセット", description: "日本の職人が作った陶器"),
        product("急須と湯呑", description: "緑茶のための道具"),
        product("ステンレス製マグカップ", description: "保温性が高い"),
    ]

    /// The titles `query` finds (all pages), in the order served.
    func titles(_ store: CatalogStore, _ query: String, category: String? = nil) async throws -> [String] {
        let filter = CatalogStore.ProductFilter(
            category: category, search: SearchQuery.expression(for: query), sort: .relevance)
        return try await store.listProducts(filter, after: nil, limit: 100).products.map(\.title)
    }

    @Test(
        "a CJK word is found inside a longer run, at its start, middle or end, from one character up",
        arguments: [
            ("湯呑み", ["伝統的な湯呑みセット"]), ("湯呑", ["伝統的な湯呑みセット", "急須と湯呑"]),
            ("湯", ["伝統的な湯呑みセット", "急須と湯呑"]), ("呑", ["伝統的な湯呑みセット", "急須と湯呑"]),
            ("セット", ["伝統的な湯呑みセット"]), ("ト", ["伝統的な湯呑みセット"]), ("伝統", ["伝統的な湯呑みセット"]),
            ("職人", ["伝統的な湯呑みセット"]), ("マグ", ["ステンレス製マグカップ"]), ("カップ", ["ステンレス製マグカップ"]),
            ("湯呑み 職人", ["伝統的な湯呑みセット"]), ("みセ", ["伝統的な湯呑みセット"]),
            ("呑み湯", []), ("湯呑み 保温", []), ("茶碗", []),
        ])
    func cjkInsideRuns(query: String, expected: [String]) async throws {
        let store = try await store(with: Self.japanese)
        #expect(try await titles(store, query) == expected)
    }

    @Test("a title holding a CJK word ranks before a description holding it")
    func cjkRanking() async throws {
        let store = try await store(with: [
            Self.product("陶器の皿", description: "湯呑みに合う"), Self.product("湯呑みセット", description: "陶器"),
        ])
        #expect(try await titles(store, "湯呑み") == ["湯呑みセット", "陶器の皿"])
    }

    @Test("Latin words keep prefix matching, and a word mixing scripts needs both parts")
    func mixedScripts() async throws {
        let store = try await store(with: [Self.product("iPhone用ケース", description: "Slim case")])
        #expect(try await titles(store, "iphone") == ["iPhone用ケース"])
        #expect(try await titles(store, "ipho") == ["iPhone用ケース"])
        #expect(try await titles(store, "iPhone用ケース") == ["iPhone用ケース"])
        #expect(try await titles(store, "ケース sli") == ["iPhone用ケース"])
        #expect(try await titles(store, "android用ケース").isEmpty)
    }

    @Test("the index form cuts CJK runs into bigrams and the last character, and leaves other text")
    func indexForm() {
        #expect(SearchText.indexForm(of: "湯呑み") == " 湯呑 呑み み ")
        #expect(SearchText.indexForm(of: "Tea 茶") == "Tea  茶 ")
        #expect(SearchText.indexForm(of: "Plain text, 42.") == "Plain text, 42.")
        #expect(SearchText.queryTerm(for: "湯呑み") == #""湯呑 呑み""#)
        #expect(SearchText.queryTerm(for: "湯") == #""湯"*"#)
        #expect(SearchText.queryTerm(for: "iphone用ケース") == #""iphone"* "用ケ ケー ース""#)
        #expect(SearchText.queryTerm(for: "lapt") == #""lapt"*"#)
    }

    @Test(
        "a misspelt query is corrected from the catalog's words, only when it finds nothing",
        arguments: [
            ("headphnes", "headphones"), ("Headphnes", "headphones"), ("hedaphones", "headphones"),
            ("wireless headphnes", "wireless headphones"), ("jakcet", "jacket"), ("earings gold", "earrings gold"),
            ("necklaec", "necklace"),
        ])
    func suggestion(query: String, expected: String) async throws {
        let store = try await store()
        let words = SearchQuery.words(of: query)
        #expect(try await titles(store, query).isEmpty)
        #expect(try await store.suggestion(for: words, category: nil) == expected)
        #expect(try await !titles(store, expected).isEmpty)
    }

    @Test(
        "no suggestion when nothing is close, the words are too short or too many, or the correction finds nothing",
        arguments: [
            ["zzzzzz"], ["qx"], ["headphnes", "jakcet"], ["headphones"], ["headp"], ["湯呑み"],
            ["headphnes", "jakcet", "necklaec", "earings"], ["headphnes", "pearl"],
        ])
    func noSuggestion(words: [String]) async throws {
        let store = try await store()
        #expect(try await store.suggestion(for: words, category: nil) == nil)
    }

    @Test("a suggestion finds products in the category asked, or is not made")
    func suggestionWithinCategory() async throws {
        let store = try await store()
        #expect(try await store.suggestion(for: ["headphnes"], category: "electronics") == "headphones")
        #expect(try await store.suggestion(for: ["headphnes"], category: "jewelery") == nil)
    }

    @Test("the words suggestions come from are kept between searches and follow every write")
    func vocabularyFollowsWrites() async throws {
        let store = try await store()
        #expect(try await store.suggestion(for: ["kaleidoscpoe"], category: nil) == nil)  // read and kept
        let (added, _) = try await store.upsert(Self.product("Brass kaleidoscope"))
        #expect(try await store.suggestion(for: ["kaleidoscpoe"], category: nil) == "kaleidoscope")
        _ = try await store.delete(id: added.id)
        #expect(try await store.suggestion(for: ["kaleidoscpoe"], category: nil) == nil)
        _ = try await store.upsert(batch: [Self.product("Kaleidoscope for children")])
        #expect(try await store.suggestion(for: ["kaleidoscpoe"], category: nil) == "kaleidoscope")
    }

    @Test("words read while a write happened are not kept")
    func vocabularyReadDuringWrite() {
        let vocabulary = SearchVocabulary()
        let stale = [SearchSuggestion.Term(word: "old", products: 1)]
        let fresh = [SearchSuggestion.Term(word: "new", products: 1)]
        // The write lands (and forgets) while the read is under way: what it read is not kept.
        #expect(vocabulary.terms { vocabulary.forget(); return stale } == stale)
        #expect(vocabulary.terms { fresh } == fresh)
        #expect(vocabulary.terms { stale } == fresh)  // kept: no read
        vocabulary.forget()
        #expect(vocabulary.terms { stale } == stale)
    }

    @Test("among equally close words, the one more products hold wins")
    func suggestionPrefersCommonWords() {
        let vocabulary = [
            SearchSuggestion.Term(word: "bolt", products: 1), SearchSuggestion.Term(word: "belt", products: 4),
            SearchSuggestion.Term(word: "bell", products: 9),
        ]
        #expect(SearchSuggestion.correction(for: "bilt", among: vocabulary) == "belt")
        #expect(SearchSuggestion.correction(for: "bxlt", among: vocabulary.reversed()) == "belt")
        #expect(SearchSuggestion.correction(for: "zzzz", among: vocabulary) == nil)
    }

    @Test("the answer omits the suggestion when there is none")
    func suggestionField() throws {
        let plain = String(decoding: try JSONEncoder().encode(ListProductsResponse(products: [], totalSize: 0)), as: UTF8.self)
        #expect(!plain.contains("suggestion"))
        let corrected = ListProductsResponse(products: [], totalSize: 0, suggestion: "headphones")
        let decoded = try JSONDecoder().decode(ListProductsResponse.self, from: try JSONEncoder().encode(corrected))
        #expect(decoded.suggestion == "headphones")
    }

    @Test("a catalog indexed the old way is reindexed on opening: products kept, CJK words and suggestions found")
    func migration() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("catalog-migration-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("catalog.sqlite").path
        // The database as the first schema left it: the external-content index kept by triggers.
        let old = try await Database(path: path, migrations: Array(CatalogSchema.migrations.prefix(1)))
        try await old.write { connection in
            for (id, product) in (SeedCatalog.products + Self.japanese).enumerated() {
                try connection.execute(
                    """
                    INSERT INTO products (id, title, description, category, price_amount, currency, image, rating_rate,
                                          rating_count, stock, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)
                    """,
                    [
                        id + 1, product.title, product.description, product.category, product.price.amount,
                        product.price.currency, product.image, product.rating.rate, product.rating.count, product.stock,
                    ])
            }
            try connection.execute("INSERT INTO catalog_meta (key, value) VALUES ('seeded', '24')")
        }
        let oldHits = try await old.read { connection in
            try connection.query("SELECT rowid FROM products_fts WHERE products_fts MATCH ?", [#""湯呑"*"#]).count
        }
        #expect(oldHits == 0, "the old index finds 湯呑 only at the start of a run, and no run starts with it")
        await old.close()

        let store = try await CatalogStore.open(location: .sqlite(path: path))
        let total = try await store.listProducts(.init(sort: .relevance), after: nil, limit: 100).total
        #expect(total == SeedCatalog.products.count + Self.japanese.count)
        #expect(try await titles(store, "湯呑") == ["伝統的な湯呑みセット", "急須と湯呑"])
        #expect(try await titles(store, "headph") == ["Pulse Wireless Noise-Cancelling Headphones"])
        #expect(try await store.suggestion(for: ["headphnes"], category: nil) == "headphones")
        // The index follows later changes, deletions included.
        #expect(try await store.delete(id: SeedCatalog.products.count + 2))
        #expect(try await titles(store, "湯呑") == ["伝統的な湯呑みセット"])
        #expect(try await store.seedIfNeeded(with: SeedCatalog.products) == false)
    }
}
