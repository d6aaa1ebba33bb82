@testable import catalog_svc
import Contracts
import Foundation
import Storage
import Testing

/// Catalog search without a database, and on SQLite files: how text and queries are cut, the
/// suggestions' choice of word, and the upgrade of a catalog indexed the old way. The searches
/// themselves run on both backends in `CatalogSearchLiveTests`.
@Suite("Catalog search: CJK words, suggestions, index migration")
struct CatalogSearchTests {
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

    /// The titles `query` finds (the first 100), in the order served.
    static func titles(_ store: CatalogStore, _ query: String, category: String? = nil) async throws -> [String] {
        let filter = CatalogStore.ProductFilter(category: category, search: SearchQuery.words(of: query), sort: .relevance)
        return try await store.listProducts(filter, after: nil, limit: 100).products.map(\.title)
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

    @Test("PostgreSQL's index is given unicode61's tokens, and its queries the same parts as FTS5's")
    func tokenFormAndTSQuery() {
        #expect(SearchText.tokenForm(of: "Noise-Cancelling, 15.6\" Café") == "noise cancelling 15 6 café")
        #expect(SearchText.tokenForm(of: "iPhone用ケース") == "iphone 用ケ ケー ース ス ")
        #expect(SearchText.tsQueryTerm(for: "lapt", titleOnly: false) == "'lapt':*")
        #expect(SearchText.tsQueryTerm(for: "湯呑み", titleOnly: true) == "('湯呑':A <-> '呑み':A)")
        #expect(SearchText.tsQueryTerm(for: "湯", titleOnly: true) == "'湯':*A")
        #expect(SearchText.tsQueryTerm(for: "iphone用ケース", titleOnly: false) == "'iphone':* & ('用ケ' <-> 'ケー' <-> 'ース')")
        #expect(SearchQuery.tsQuery(for: ["wireless", "hea"]) == "('wireless':*) & ('hea':*)")
        #expect(SearchQuery.tsQuery(for: []) == nil)
        #expect(SearchText.queryParts(for: "o'neil\\") == [.prefix("o'neil\\")])
        #expect(SearchText.tsQueryTerm(for: "o'neil\\", titleOnly: false) == #"'o''neil\\':*"#)
    }

    @Test("words are kept per version of the products' text, and words of an older version never replace newer ones")
    func vocabularyVersions() {
        let vocabulary = SearchVocabulary()
        let old = [SearchSuggestion.Term(word: "old", products: 1)]
        let new = [SearchSuggestion.Term(word: "new", products: 1)]
        #expect(vocabulary.terms(at: 1) { old } == old)
        #expect(vocabulary.terms(at: 1) { new } == old)  // kept: no read
        #expect(vocabulary.terms(at: 2) { new } == new)  // another replica wrote
        // A read that began before the write (at version 1) finishes after it: served, not kept.
        #expect(vocabulary.terms(at: 1) { old } == old)
        #expect(vocabulary.terms(at: 2) { old } == new)
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
        #expect(try await Self.titles(store, "湯呑") == ["伝統的な湯呑みセット", "急須と湯呑"])
        #expect(try await Self.titles(store, "headph") == ["Pulse Wireless Noise-Cancelling Headphones"])
        #expect(try await store.suggestion(for: ["headphnes"], category: nil) == "headphones")
        // The index follows later changes, deletions included.
        #expect(try await store.delete(id: SeedCatalog.products.count + 2))
        #expect(try await Self.titles(store, "湯呑") == ["伝統的な湯呑みセット"])
        #expect(try await store.seedIfNeeded(with: SeedCatalog.products) == false)
    }
}
