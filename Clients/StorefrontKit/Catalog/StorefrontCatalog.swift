import Contracts
import Foundation
import RPC

/// The shop's products as a shopper browses them: listings and search paged as
/// ``ProductPages``, categories, single products, the product page and the home screen;
/// favorites are in `StorefrontCatalog+Favorites.swift`. Browsing needs no user; the product
/// page and home add the signed-in user's favorite flag and basket when there is one.
///
/// Thread-safe.
public struct StorefrontCatalog: Sendable {
    let calls: StorefrontCalls

    /// The products, of `category` when given, in `sort` order, `pageSize` (at most 100) a page.
    ///
    /// Iterating throws `.invalidPageToken`, `.invalidArgument` for a category over 100
    /// characters (or 400 bytes of UTF-8).
    public func products(category: String? = nil, sort: ProductSort = .relevance, pageSize: Int = 20) -> ProductPages {
        pages(of: ListProductsRequest(category: category, sort: sort, pageSize: pageSize))
    }

    /// The products whose title or description match `query` (full-text, words matched as
    /// prefixes, best match first under `.relevance`), of `category` when given.
    ///
    /// Iterating throws `.invalidPageToken`, `.invalidArgument` for a query over 500 characters
    /// (or over 2,000 bytes of UTF-8) or a category over 100 (or 400 bytes).
    public func search(_ query: String, category: String? = nil, sort: ProductSort = .relevance, pageSize: Int = 20) -> ProductPages {
        pages(of: ListProductsRequest(category: category, query: query, sort: sort, pageSize: pageSize))
    }

    /// Every category with how many products it lists.
    public func categories() async throws(StorefrontError) -> [Category] {
        try await calls.anonymous(CatalogContract.listCategories, Empty()).categories
    }

    /// The product `id`.
    ///
    /// - Throws: `.productNotFound`.
    public func product(id: Int) async throws(StorefrontError) -> Product {
        try await calls.anonymous(CatalogContract.getProduct, GetProductRequest(id: id)).product
    }

    /// The products of `ids` that exist, in the order asked for, and the ids that name no
    /// product. Any number of ids: they are asked for 100 (the server's limit) a call.
    public func products(ids: [Int]) async throws(StorefrontError) -> (products: [Product], missingIDs: [Int]) {
        var found: [Product] = []
        var missing: [Int] = []
        for start in stride(from: 0, to: ids.count, by: CatalogContract.maxBatchSize) {
            let batch = Array(ids[start..<min(start + CatalogContract.maxBatchSize, ids.count)])
            let answer = try await calls.anonymous(CatalogContract.batchGetProducts, BatchGetProductsRequest(ids: batch))
            found += answer.products
            missing += answer.missingIds
        }
        return (found, missing)
    }

    /// The product page of `id`: the product, whether the signed-in user marked it a favorite
    /// and their basket line for it (false and nil when signed out).
    ///
    /// - Throws: `.productNotFound`.
    public func productPage(id: Int) async throws(StorefrontError) -> GetProductPageResponse {
        try await calls.signedIn(StorefrontContract.getProductPage, GetProductPageRequest(productId: id))
    }

    /// The home screen: every category, the first `pageSize` products (of `category` when
    /// given; ``products(category:sort:pageSize:)`` continues with `nextPageToken`'s pages
    /// as any listing) and the signed-in user's basket item count (0 when signed out).
    /// Throws `.invalidArgument` for a category over 100 characters (or 400 bytes of UTF-8).
    public func home(category: String? = nil, pageSize: Int = 20) async throws(StorefrontError) -> GetHomeResponse {
        try await calls.signedIn(StorefrontContract.getHome, GetHomeRequest(category: category, pageSize: pageSize))
    }

    /// The pages `ListProducts` answers to `request`, each fetched with the token of the one before.
    private func pages(of request: ListProductsRequest) -> ProductPages {
        ProductPages { [calls] pageToken throws(StorefrontError) in
            var request = request
            request.pageToken = pageToken
            let answer = try await calls.anonymous(CatalogContract.listProducts, request)
            return (ProductsPage(products: answer.products, totalSize: answer.totalSize, suggestion: answer.suggestion), answer.nextPageToken)
        }
    }
}
