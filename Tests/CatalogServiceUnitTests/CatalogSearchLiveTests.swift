@testable import catalog_svc
import Contracts
import ServiceTestSupport
import Storage
import Testing

/// `CatalogStore` search on each backend (SQLite's FTS5, PostgreSQL's `tsvector`): the same
/// words find the same products in the same order — words inside CJK runs, prefixes, accents,
/// title matches first — and the same suggestions come from the catalog's vocabulary.
@Suite("Catalog search on SQLite and PostgreSQL, live")
struct CatalogSearchLiveTests {
    /// Runs `body` with a store on `backend` holding the seed catalog and `extra`.
    func withStore<Value>(
        _ backend: CatalogBackend, adding extra: [Product] = [], _ body: (CatalogStore) async throws -> Value
    ) async throws -> Value {
        try await backend.withStore { store async throws in
            for product in extra { _ = try await store.upsert(product) }
            return try await body(store)
        }
    }

    /// The titles `query` finds (the first 100), in the order served.
    func titles(_ store: CatalogStore, _ query: String, category: String? = nil) async throws -> [String] {
        try await CatalogSearchTests.titles(store, query, category: category)
    }

    @Test(
        "a CJK word is found inside a longer run, at its start, middle or end, from one character up",
        arguments: CatalogBackend.allCases, [
            ("湯呑み", ["伝統的な湯呑みセット"]), ("湯呑", ["伝統的な湯呑みセット", "急須と湯呑"]),
            ("湯", ["伝統的な湯呑みセット", "急須と湯呑"]), ("呑", ["伝統的な湯呑みセット", "急須と湯呑"]),
            ("セット", ["伝統的な湯呑みセット"]), ("ト", ["伝統的な湯呑みセット"]), ("伝統", ["伝統的な湯呑みセット"]),
            ("職人", ["伝統的な湯呑みセット"]), ("マグ", ["ステンレス製マグカップ"]), ("カップ", ["ステンレス製マグカップ"]),
            ("湯呑み 職人", ["伝統的な湯呑みセット"]), ("みセ", ["伝統的な湯呑みセット"]),
            ("呑み湯", []), ("湯呑み 保温", []), ("茶碗", []),
        ])
    func cjkInsideRuns(backend: CatalogBackend, search: (query: String, expected: [String])) async throws {
        try await withStore(backend, adding: CatalogSearchTests.japanese) { store async throws in
            #expect(try await titles(store, search.query) == search.expected)
        }
    }

    @Test("a title holding a CJK word ranks before a description holding it", arguments: CatalogBackend.allCases)
    func cjkRanking(backend: CatalogBackend) async throws {
        let products = [
            CatalogSearchTests.product("陶器の皿", description: "湯呑みに合う"),
            CatalogSearchTests.product("湯呑みセット", description: "陶器"),
        ]
        try await withStore(backend, adding: products) { store async throws in
            #expect(try await titles(store, "湯呑み") == ["湯呑みセット", "陶器の皿"])
        }
    }

    @Test("Latin words keep prefix matching, and a word mixing scripts needs both parts", arguments: CatalogBackend.allCases)
    func mixedScripts(backend: CatalogBackend) async throws {
        try await withStore(backend, adding: [CatalogSearchTests.product("iPhone用ケース", description: "Slim case")]) { store async throws in
            #expect(try await titles(store, "iphone") == ["iPhone用ケース"])
            #expect(try await titles(store, "ipho") == ["iPhone用ケース"])
            #expect(try await titles(store, "iPhone用ケース") == ["iPhone用ケース"])
            #expect(try await titles(store, "ケース sli") == ["iPhone用ケース"])
            #expect(try await titles(store, "android用ケース").isEmpty)
        }
    }

    @Test(
        "words are cut at punctuation, accents are ignored, and titles rank first, then ids",
        arguments: CatalogBackend.allCases)
    func wordsAccentsAndRanking(backend: CatalogBackend) async throws {
        let products = [
            CatalogSearchTests.product("Crème brûlée torch", description: "For the café kitchen"),
            CatalogSearchTests.product("Espresso cups", description: "Café-style, 15.6 cl, set of 4"),
            CatalogSearchTests.product("Cafe table", description: "Round"),
        ]
        try await withStore(backend, adding: products) { store async throws in
            #expect(try await titles(store, "cafe") == ["Cafe table", "Crème brûlée torch", "Espresso cups"])
            #expect(try await titles(store, "CAFÉ STYLE") == ["Espresso cups"])
            #expect(try await titles(store, "creme brul") == ["Crème brûlée torch"])
            #expect(try await titles(store, "6 cl") == ["Espresso cups"])
            #expect(try await titles(store, "15.6") == ["Espresso cups"])
            #expect(try await titles(store, "table", category: "KITCHEN") == ["Cafe table"])
            #expect(try await titles(store, "table", category: "kitchén").isEmpty)
        }
    }

    @Test(
        "a misspelt query is corrected from the catalog's words, only when it finds nothing",
        arguments: CatalogBackend.allCases, [
            ("headphnes", "headphones"), ("Headphnes", "headphones"), ("hedaphones", "headphones"),
            ("wireless headphnes", "wireless headphones"), ("jakcet", "jacket"), ("earings gold", "earrings gold"),
            ("necklaec", "necklace"),
        ])
    func suggestion(backend: CatalogBackend, correction: (query: String, expected: String)) async throws {
        try await withStore(backend) { store async throws in
            let words = SearchQuery.words(of: correction.query)
            #expect(try await titles(store, correction.query).isEmpty)
            #expect(try await store.suggestion(for: words, category: nil) == correction.expected)
            #expect(try await !titles(store, correction.expected).isEmpty)
        }
    }

    @Test(
        "no suggestion when nothing is close, the words are too short or too many, or the correction finds nothing",
        arguments: CatalogBackend.allCases, [
            ["zzzzzz"], ["qx"], ["headphnes", "jakcet"], ["headphones"], ["headp"], ["湯呑み"],
            ["headphnes", "jakcet", "necklaec", "earings"], ["headphnes", "pearl"],
        ])
    func noSuggestion(backend: CatalogBackend, words: [String]) async throws {
        try await withStore(backend) { store async throws in
            #expect(try await store.suggestion(for: words, category: nil) == nil)
        }
    }

    @Test("a suggestion finds products in the category asked, or is not made", arguments: CatalogBackend.allCases)
    func suggestionWithinCategory(backend: CatalogBackend) async throws {
        try await withStore(backend) { store async throws in
            #expect(try await store.suggestion(for: ["headphnes"], category: "electronics") == "headphones")
            #expect(try await store.suggestion(for: ["headphnes"], category: "jewelery") == nil)
        }
    }

    @Test("the words suggestions come from are kept between searches and follow every write", arguments: CatalogBackend.allCases)
    func vocabularyFollowsWrites(backend: CatalogBackend) async throws {
        try await withStore(backend) { store async throws in
            #expect(try await store.suggestion(for: ["kaleidoscpoe"], category: nil) == nil)  // read and kept
            let (added, _) = try await store.upsert(CatalogSearchTests.product("Brass kaleidoscope"))
            #expect(try await store.suggestion(for: ["kaleidoscpoe"], category: nil) == "kaleidoscope")
            _ = try await store.delete(id: added.id)
            #expect(try await store.suggestion(for: ["kaleidoscpoe"], category: nil) == nil)
            _ = try await store.upsert(batch: [CatalogSearchTests.product("Kaleidoscope for children")])
            #expect(try await store.suggestion(for: ["kaleidoscpoe"], category: nil) == "kaleidoscope")
        }
    }

    @Test("searches ignore accents on PostgreSQL through unaccent, recorded as such", arguments: [true, false])
    func accentsOnPostgreSQL(unaccentAvailable: Bool) async throws {
        try await CatalogBackend.withPostgreSQLDatabase { url in
            // Without unaccent (an extension that cannot be created stands in for it), the
            // configuration keeps accents, and says so.
            var migrations = CatalogSchema.postgreSQLMigrations
            if !unaccentAvailable {
                migrations[1] = Migration("without unaccent") {
                    try CatalogSchema.createSearchConfiguration(on: $0, accentExtension: "storefront_missing_extension")
                }
            }
            let database = try await Database(
                location: .postgresql(url: url, schema: "catalog"), migrations: Migrations(sqlite: [], postgresql: migrations))
            let store = CatalogStore(database: database)
            _ = try await store.upsert(CatalogSearchTests.product("Crème brûlée torch"))
            let found = try await CatalogSearchTests.titles(store, "creme").count
            let keepsAccents = try await store.searchKeepsAccents()
            let foundAccented = try await CatalogSearchTests.titles(store, "crème").count
            await database.close()
            #expect(found == (unaccentAvailable ? 1 : 0))
            #expect(foundAccented == 1)
            #expect(keepsAccents == !unaccentAvailable)
        }
    }
}
