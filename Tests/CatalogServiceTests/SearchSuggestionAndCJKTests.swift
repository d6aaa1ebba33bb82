import Contracts
import RPC
import ServiceTestSupport
import Testing

/// `ListProducts` over a real catalog-svc (README "Choices"): a query that finds nothing
/// carries `suggestion`, the query corrected from the catalog's own words; and a Chinese,
/// Japanese or Korean word is found inside a longer run of such characters.
@Suite("Search: spelling suggestions and CJK words")
struct SearchSuggestionAndCJKTests {
    @Test("a misspelt query finds nothing and suggests the catalog's word; the suggestion finds products")
    func typo() async throws {
        try await withCatalogService { stack in
            let typo = try await stack.listProducts(ListProductsRequest(query: "headphnes"))
            #expect(typo.products.isEmpty && typo.totalSize == 0 && typo.nextPageToken.isEmpty)
            #expect(typo.suggestion == "headphones")
            let suggestion: String = try #require(typo.suggestion)
            let corrected = try await stack.listProducts(ListProductsRequest(query: suggestion))
            #expect(corrected.products.map(\.title) == ["Pulse Wireless Noise-Cancelling Headphones"])
            #expect(corrected.suggestion == nil)
            let twoWords = try await stack.listProducts(ListProductsRequest(query: "Wireless, headphnes!"))
            #expect(twoWords.suggestion == "wireless headphones")
        }
    }

    @Test("no suggestion when the query finds products, nothing is close, or the correction finds nothing in the category")
    func noSuggestion() async throws {
        try await withCatalogService { stack in
            #expect(try await stack.listProducts(ListProductsRequest(query: "headph")).suggestion == nil)
            #expect(try await stack.listProducts(ListProductsRequest(query: "xqzvwk")).suggestion == nil)
            let elsewhere = try await stack.listProducts(ListProductsRequest(category: "jewelery", query: "headphnes"))
            #expect(elsewhere.totalSize == 0 && elsewhere.suggestion == nil)
            let inside = try await stack.listProducts(ListProductsRequest(category: "electronics", query: "headphnes"))
            #expect(inside.suggestion == "headphones")
        }
    }

    @Test("the suggestion comes from products added later, not from a fixed list")
    func suggestionFollowsCatalog() async throws {
        try await withCatalogService(seeded: false) { stack in
            #expect(try await stack.listProducts(ListProductsRequest(query: "kaleidoscpoe")).suggestion == nil)
            try await stack.upsert(SampleProducts.make("Brass kaleidoscope", description: "Turns light into patterns."))
            #expect(try await stack.listProducts(ListProductsRequest(query: "kaleidoscpoe")).suggestion == "kaleidoscope")
        }
    }

    @Test(
        "a Japanese word is found inside a longer run, down to one character, with paging and totalSize",
        arguments: ["湯呑み", "湯呑", "呑", "セット", "ト"])
    func japanese(query: String) async throws {
        try await withCatalogService(seeded: false) { stack in
            try await stack.upsert(SampleProducts.make("日本の伝統的な湯呑みセット", description: "職人の手作り"))
            try await stack.upsert(SampleProducts.make("日本茶", description: "静岡の緑茶"))
            let page = try await stack.listProducts(ListProductsRequest(query: query, pageSize: 1))
            #expect(page.products.map(\.title) == ["日本の伝統的な湯呑みセット"])
            #expect(page.totalSize == 1 && page.nextPageToken.isEmpty)
            let nippon = try await stack.allProducts(ListProductsRequest(query: "日本"), pageSize: 1)
            #expect(nippon.map(\.title) == ["日本の伝統的な湯呑みセット", "日本茶"])
        }
    }
}
