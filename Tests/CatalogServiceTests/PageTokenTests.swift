import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing

/// Page tokens are opaque and signed (README "Choices"): an altered token, a made-up one, or
/// a genuine one sent with other filters is `INVALID_ARGUMENT`/`INVALID_PAGE_TOKEN`.
@Suite("Page tokens")
struct PageTokenTests {
    /// A way of spoiling a genuine page token.
    enum Tampering: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case middleCharacterChanged = "one character in the middle changed"
        case firstCharacterChanged = "the first character changed"
        case truncated = "the last 4 characters cut off"
        case extended = "characters appended"
        case reversed = "reversed"
        case madeUp = "a made-up word"
        case forgedPosition = "base64 JSON of a position, unsigned"
        case huge = "64 KiB of letters"

        var testDescription: String { rawValue }

        /// `token` spoiled this way.
        func apply(to token: String) -> String {
            switch self {
            case .middleCharacterChanged: return Self.changing(token, at: token.count / 2)
            case .firstCharacterChanged: return Self.changing(token, at: 0)
            case .truncated: return String(token.dropLast(4))
            case .extended: return token + "AAAA"
            case .reversed: return String(token.reversed())
            case .madeUp: return "next-please"
            case .forgedPosition: return Data(#"{"after":5,"sort":"RELEVANCE"}"#.utf8).base64EncodedString()
            case .huge: return String(repeating: "Q", count: 64 << 10)
            }
        }

        private static func changing(_ token: String, at offset: Int) -> String {
            var characters = Array(token)
            guard characters.indices.contains(offset) else { return token + "x" }
            characters[offset] = characters[offset] == "A" ? "B" : "A"
            return String(characters)
        }
    }

    @Test("a tampered ListProducts page token is INVALID_PAGE_TOKEN", arguments: Tampering.allCases)
    func tamperedToken(tampering: Tampering) async throws {
        try await withCatalogService { stack in
            let first = try await stack.listProducts(ListProductsRequest(pageSize: 5))
            let spoiled = tampering.apply(to: first.nextPageToken)
            try #require(spoiled != first.nextPageToken)
            await expectRPCError(CatalogReason.invalidPageToken) {
                try await stack.listProducts(ListProductsRequest(pageSize: 5, pageToken: spoiled))
            }
            // The genuine token still works afterwards.
            let second = try await stack.listProducts(ListProductsRequest(pageSize: 5, pageToken: first.nextPageToken))
            #expect(second.products.count == 5)
        }
    }

    /// A request that yields a page token, and a request with other filters that reuses it.
    struct Reuse: Sendable, CustomTestStringConvertible {
        /// What the entry checks, for the test report.
        var testDescription: String
        /// The request whose next-page token is reused.
        var first: ListProductsRequest
        /// The request that reuses it, with other filters.
        var second: ListProductsRequest

        /// Every change of filters that must void a token.
        static let all = [
            Reuse(
                testDescription: "all products, then one category", first: ListProductsRequest(),
                second: ListProductsRequest(category: "odd")),
            Reuse(
                testDescription: "one category, then another", first: ListProductsRequest(category: "even"),
                second: ListProductsRequest(category: "odd")),
            Reuse(
                testDescription: "one category, then all", first: ListProductsRequest(category: "even"),
                second: ListProductsRequest()),
            Reuse(
                testDescription: "no query, then a query", first: ListProductsRequest(),
                second: ListProductsRequest(query: "sturdy")),
            Reuse(
                testDescription: "one query, then another", first: ListProductsRequest(query: "sturdy"),
                second: ListProductsRequest(query: "sleek")),
            Reuse(
                testDescription: "a query, then none", first: ListProductsRequest(query: "sturdy"),
                second: ListProductsRequest()),
            Reuse(
                testDescription: "PRICE_ASC, then PRICE_DESC", first: ListProductsRequest(sort: .priceAscending),
                second: ListProductsRequest(sort: .priceDescending)),
            Reuse(
                testDescription: "RELEVANCE, then RATING", first: ListProductsRequest(sort: .relevance),
                second: ListProductsRequest(sort: .rating)),
            Reuse(
                testDescription: "RATING, then PRICE_ASC", first: ListProductsRequest(sort: .rating),
                second: ListProductsRequest(sort: .priceAscending)),
        ]
    }

    @Test("a page token sent with another category, query or sort is INVALID_PAGE_TOKEN", arguments: Reuse.all)
    func tokenBoundToFilters(reuse: Reuse) async throws {
        try await withCatalogService(seeded: false) { stack in
            let products = (0..<24).map { index in
                SampleProducts.make(
                    "Token item \(index)", description: index < 12 ? "A sturdy thing." : "A sleek thing.",
                    category: index.isMultiple(of: 2) ? "even" : "odd", price: 500 + 37 * (index % 7),
                    rate: Double(index % 5), ratingCount: index)
            }
            try await stack.importProducts(products)
            var first = reuse.first
            first.pageSize = 3
            let page = try await stack.listProducts(first)
            try #require(!page.nextPageToken.isEmpty)
            var second = reuse.second
            second.pageSize = 3
            second.pageToken = page.nextPageToken
            await expectRPCError(CatalogReason.invalidPageToken) { try await stack.listProducts(second) }
        }
    }

    @Test("a ListFavorites page token is no ListProducts page token")
    func favoritesTokenNotForProducts() async throws {
        try await withCatalogService { stack in
            let session = try await stack.signedInUser("paging@example.com")
            for id in try await stack.allProducts().prefix(3).map(\.id) { try await stack.addFavorite(id, as: session) }
            let favorites = try await stack.favorites(of: session, pageSize: 1)
            try #require(!favorites.nextPageToken.isEmpty)
            await expectRPCError(CatalogReason.invalidPageToken) {
                try await stack.listProducts(ListProductsRequest(pageSize: 1, pageToken: favorites.nextPageToken))
            }
        }
    }

    @Test("a ListFavorites page token that was altered is refused with INVALID_ARGUMENT")
    func tamperedFavoritesToken() async throws {
        try await withCatalogService { stack in
            let session = try await stack.signedInUser("paging@example.com")
            for id in try await stack.allProducts().prefix(3).map(\.id) { try await stack.addFavorite(id, as: session) }
            let first = try await stack.favorites(of: session, pageSize: 1)
            try #require(!first.nextPageToken.isEmpty)
            await expectRPCError(.invalidArgument, reason: nil) {
                try await stack.favorites(of: session, pageSize: 1, pageToken: Tampering.middleCharacterChanged.apply(to: first.nextPageToken))
            }
            await expectRPCError(.invalidArgument, reason: nil) {
                try await stack.favorites(of: session, pageSize: 1, pageToken: "next-please")
            }
        }
    }
}
