import Contracts
import RPC
import ServiceTestSupport
import Testing

/// `ListProducts` `query` and `category` (API.md §4, README "Choices"): full-text search over
/// title and description, every word a prefix, all words required, products whose title holds
/// every word ranked first, then by id; categories filtered exactly but case-insensitively.
@Suite("Search and category filter")
struct SearchTests {
    /// A small catalog with known words; the description-only match is created first, so
    /// that id order and rank order differ.
    static func searchCatalog() -> [Product] {
        [
            SampleProducts.make(
                "Canvas tote", description: "Roomy tote with a quixotic print on both sides.", category: "bags", price: 2_500),
            SampleProducts.make("Quixotic lamp", description: "A lamp for the desk.", category: "lighting", price: 4_000),
            SampleProducts.make(
                "Featherweight laptop", description: "Thin and light, with a matte screen.", category: "computers", price: 99_900),
            SampleProducts.make("Laptop sleeve", description: "Felt sleeve for thin laptops.", category: "bags", price: 1_500),
            SampleProducts.make("Desk fan", description: "Quiet fan with three speeds.", category: "appliances", price: 3_000),
        ]
    }

    /// The titles `query` finds, in the order served.
    static func titles(_ stack: CatalogStack, _ request: ListProductsRequest) async throws -> [String] {
        let page = try await stack.listProducts(request)
        #expect(page.totalSize == page.products.count)
        return page.products.map(\.title)
    }

    @Test("a title match ranks above a match in the description only", arguments: ["quixotic", "quix", "QUIXOTIC"])
    func titleRanksFirst(query: String) async throws {
        try await withCatalogService(seeded: false) { stack in
            try await stack.importProducts(Self.searchCatalog())
            #expect(try await Self.titles(stack, ListProductsRequest(query: query)) == ["Quixotic lamp", "Canvas tote"])
        }
    }

    @Test("a title holding every word ranks first; words split between title and description do not")
    func wholeTitleMatchRanksFirst() async throws {
        try await withCatalogService(seeded: false) { stack in
            try await stack.importProducts([
                SampleProducts.make("Feather pillow", description: "Fits a laptop bag."),
                SampleProducts.make("Plain box", description: "Holds a feather and a laptop."),
                SampleProducts.make("Featherweight laptop", description: "Thin."),
                SampleProducts.make("Laptop with feather keys", description: "Soft."),
            ])
            let titles = try await Self.titles(stack, ListProductsRequest(query: "lapt feather"))
            #expect(titles == ["Featherweight laptop", "Laptop with feather keys", "Feather pillow", "Plain box"])
        }
    }

    /// A query and the titles it must find, in any order.
    struct Match: Sendable, CustomTestStringConvertible {
        /// The query.
        var query: String
        /// The titles of every product it must find.
        var titles: Set<String>
        var testDescription: String { "\"\(query)\" finds \(titles.sorted())" }

        /// The table.
        static let all = [
            Match(query: "lapt", titles: ["Featherweight laptop", "Laptop sleeve"]),
            Match(query: "feather lapt", titles: ["Featherweight laptop"]),
            Match(query: "lapt feather", titles: ["Featherweight laptop"]),
            Match(query: "feather lamp", titles: []),
            Match(query: "roomy", titles: ["Canvas tote"]),
            Match(query: "desk", titles: ["Quixotic lamp", "Desk fan"]),
            Match(query: "zebra", titles: []),
            Match(query: "bags", titles: []),
            Match(query: "lapt*", titles: ["Featherweight laptop", "Laptop sleeve"]),
            Match(query: "!!!", titles: []),
            Match(query: "***", titles: []),
            Match(query: "--", titles: []),
        ]
    }

    @Test("every word of a query matches as a prefix, and all words must match", arguments: Match.all)
    func prefixMatching(match: Match) async throws {
        try await withCatalogService(seeded: false) { stack in
            try await stack.importProducts(Self.searchCatalog())
            #expect(try await Set(Self.titles(stack, ListProductsRequest(query: match.query))) == match.titles)
        }
    }

    @Test("an empty query or category filters nothing: every product, in id order")
    func emptyQuery() async throws {
        try await withCatalogService(seeded: false) { stack in
            try await stack.importProducts(Self.searchCatalog())
            let page = try await stack.listProducts(ListProductsRequest(query: ""))
            #expect(page.products.map(\.title) == Self.searchCatalog().map(\.title))
            let unfiltered = try await stack.listProducts(ListProductsRequest(category: "", query: ""))
            #expect(unfiltered == page)
        }
    }

    @Test("search syntax in a query is taken as text, never as an error", arguments: [
        #""feather"#, "feather OR lamp", "NEAR(feather lamp)", "title:feather", "feather AND", "^lamp", "lamp)", "'; DROP TABLE products; --",
        "é", "日本語", "🚀",
    ])
    func syntaxIsText(query: String) async throws {
        try await withCatalogService(seeded: false) { stack in
            try await stack.importProducts(Self.searchCatalog())
            let page = try await stack.listProducts(ListProductsRequest(query: query))
            #expect(page.totalSize == page.products.count)
            #expect(try await stack.listProducts().totalSize == Self.searchCatalog().count)
        }
    }

    @Test("a query combines with a category, and the sort orders the matches")
    func queryWithCategoryAndSort() async throws {
        try await withCatalogService(seeded: false) { stack in
            try await stack.importProducts(Self.searchCatalog())
            let bags = try await Self.titles(stack, ListProductsRequest(category: "bags", query: "lapt"))
            #expect(bags == ["Laptop sleeve"])
            let cheapest = try await Self.titles(stack, ListProductsRequest(query: "lapt", sort: .priceAscending))
            #expect(cheapest == ["Laptop sleeve", "Featherweight laptop"])
            let dearest = try await Self.titles(stack, ListProductsRequest(query: "lapt", sort: .priceDescending))
            #expect(dearest == ["Featherweight laptop", "Laptop sleeve"])
        }
    }

    @Test("a query's results page like any others, with totalSize counting every match")
    func queryPaging() async throws {
        try await withCatalogService(seeded: false) { stack in
            try await stack.importProducts(SampleProducts.numbered("Gizmo", count: 12) + SampleProducts.numbered("Widget", count: 5))
            let first = try await stack.listProducts(ListProductsRequest(query: "gizm", pageSize: 5))
            #expect(first.totalSize == 12 && first.products.count == 5)
            let all = try await stack.allProducts(ListProductsRequest(query: "gizm"), pageSize: 5)
            #expect(all.count == 12 && Set(all.map(\.id)).count == 12)
            #expect(all.allSatisfy { $0.title.hasPrefix("Gizmo") })
        }
    }

    @Test("a changed or deleted product is searched by its new text, or not at all")
    func searchFollowsChanges() async throws {
        try await withCatalogService(seeded: false) { stack in
            try await stack.importProducts(Self.searchCatalog())
            var fan = try #require(try await stack.allProducts().first(where: { $0.title == "Desk fan" }))
            fan.title = "Tower ventilator"
            fan.description = "Moves the air quietly."
            try await stack.upsert(fan)
            #expect(try await Self.titles(stack, ListProductsRequest(query: "vent")) == ["Tower ventilator"])
            #expect(try await Self.titles(stack, ListProductsRequest(query: "fan")).isEmpty)
            try await stack.delete(fan.id)
            #expect(try await Self.titles(stack, ListProductsRequest(query: "vent")).isEmpty)
        }
    }

    @Test("category filters exactly, in any letter case", arguments: ["electronics", "ELECTRONICS", "Electronics"])
    func categoryFilter(category: String) async throws {
        try await withCatalogService { stack in
            let everything = try await stack.allProducts()
            let expected = everything.filter { $0.category == "electronics" }.map(\.id)
            try #require(!expected.isEmpty)
            let filtered = try await stack.allProducts(ListProductsRequest(category: category), pageSize: 3)
            #expect(filtered.map(\.id) == expected)
        }
    }

    @Test("a category that is only a prefix of one, or unknown, lists nothing", arguments: ["electro", "clothing", "toys"])
    func categoryIsExact(category: String) async throws {
        try await withCatalogService { stack in
            let page = try await stack.listProducts(ListProductsRequest(category: category))
            #expect(page.products.isEmpty && page.totalSize == 0)
        }
    }
}
