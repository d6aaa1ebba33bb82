import Contracts

/// A listing's pages, fetched one at a time as iteration asks for them: the first page, then
/// each next one with the token the page before it answered, ending after the page whose
/// `nextPageToken` is "" (API.md §2). Nothing is fetched before the first `next()`, and each
/// iteration starts again from the first page.
///
/// ```swift
/// for try await page in client.catalog.products(category: "electronics") { show(page.products) }
/// ```
///
/// Iterating throws ``StorefrontError`` (`.invalidPageToken` when the listing changed shape
/// under its token) and ends after the error. A cancelled task's iteration throws `.cancelled`
/// without fetching, and cancelling during a fetch cancels its request.
public struct PageSequence<Page: Sendable>: AsyncSequence, Sendable {
    /// One page of the listing.
    public typealias Element = Page
    /// What iterating throws.
    public typealias Failure = StorefrontError
    /// Fetches the page at `pageToken` (nil for the first): the page and the token of the
    /// next, "" after the last.
    typealias Fetch = @Sendable (_ pageToken: String?) async throws(StorefrontError) -> (page: Page, nextPageToken: String)

    /// How each page is fetched.
    let fetch: Fetch

    /// Pages fetched by `fetch`.
    init(fetch: @escaping Fetch) {
        self.fetch = fetch
    }

    /// An iterator starting at the first page.
    public func makeAsyncIterator() -> Iterator { Iterator(fetch: fetch) }

    /// Fetches the pages in turn, remembering the token of the next.
    public struct Iterator: AsyncIteratorProtocol, Sendable {
        /// How each page is fetched.
        let fetch: Fetch
        /// The token of the page to fetch next; nil before the first.
        private var pageToken: String?
        /// Whether the last page was returned, or iteration failed.
        private var finished = false

        /// An iterator before the first page.
        init(fetch: @escaping Fetch) {
            self.fetch = fetch
        }

        /// The next page; nil after the last.
        ///
        /// - Throws: the fetch's ``StorefrontError``, `.cancelled` when the task is cancelled.
        public mutating func next() async throws(StorefrontError) -> Page? {
            guard !finished else { return nil }
            finished = true  // until a page arrives that names a next one
            if Task.isCancelled { throw StorefrontError.converting(CancellationError()) }
            let (page, nextPageToken) = try await fetch(pageToken)
            pageToken = nextPageToken
            finished = nextPageToken.isEmpty
            return page
        }
    }
}

/// The pages of products of ``StorefrontCatalog/products(category:sort:pageSize:)`` and
/// ``StorefrontCatalog/search(_:category:sort:pageSize:)``.
public typealias ProductPages = PageSequence<ProductsPage>
/// The pages of the signed-in user's favorite products, most recently added first.
public typealias FavoritePages = PageSequence<[Product]>
/// The pages of the signed-in user's orders, newest first.
public typealias OrderPages = PageSequence<[Order]>

/// One page of a product listing.
public struct ProductsPage: Sendable, Hashable {
    /// The page's products, in the listing's order.
    public var products: [Product]
    /// How many products the listing has across all its pages; nil from a server that does
    /// not count them.
    public var totalSize: Int?
    /// For a search that found nothing: the query with its misspelt words corrected
    /// ("headphnes" → "headphones"), which does find products; nil otherwise.
    public var suggestion: String?

    /// A page of `products` out of `totalSize`.
    public init(products: [Product], totalSize: Int?, suggestion: String? = nil) {
        self.products = products
        self.totalSize = totalSize
        self.suggestion = suggestion
    }
}
