public import RPC

/// The order of a `ListProducts` page.
public enum ProductSort: String, Codable, Sendable, CaseIterable {
    /// Best full-text match first when there is a query; catalog order (ascending id) without one.
    case relevance = "RELEVANCE"
    /// Cheapest first.
    case priceAscending = "PRICE_ASC"
    /// Most expensive first.
    case priceDescending = "PRICE_DESC"
    /// Best rated first.
    case rating = "RATING"
}

/// `ListProducts` request: `{category?, query?, sort?, pageSize?, pageToken?}`.
public struct ListProductsRequest: RPCMessage, Hashable, PagedRequest {
    /// Only products of this category; absent or "" for all.
    public var category: String?
    /// Full-text search over title and description, with prefix matching; absent or "" for none.
    public var query: String?
    /// The order; `RELEVANCE` when absent.
    public var sort: ProductSort?
    /// The page size; 20 when absent, at most 100.
    public var pageSize: Int?
    /// The previous page's `nextPageToken`; absent for the first page.
    public var pageToken: String?

    /// Creates a request.
    public init(
        category: String? = nil, query: String? = nil, sort: ProductSort? = nil, pageSize: Int? = nil,
        pageToken: String? = nil
    ) {
        self.category = category
        self.query = query
        self.sort = sort
        self.pageSize = pageSize
        self.pageToken = pageToken
    }

    /// The order to serve: `sort`, or `RELEVANCE` when absent.
    public var effectiveSort: ProductSort { sort ?? .relevance }

    /// The JSON fields, for `Describe`.
    public static let fields = [
        FieldDescriptor("category", "String", optional: true),
        FieldDescriptor("query", "String", optional: true),
        FieldDescriptor("sort", "String", optional: true),
        FieldDescriptor("pageSize", "Int", optional: true),
        FieldDescriptor("pageToken", "String", optional: true),
    ]
}

extension ListProductsRequest {
    /// The most characters of a `query`.
    public static let maxQueryLength = 500
    /// The most characters of a `category` filter.
    public static let maxCategoryLength = 100

    /// Refuses a `query` over ``maxQueryLength`` characters (`QUERY_TOO_LONG`) or a `category`
    /// over ``maxCategoryLength`` (`INVALID_CATEGORY`), naming the field. Each is bounded in
    /// UTF-8 as well, at 4 bytes a character, and that is checked first: a few characters of
    /// thousands of combining marks each cannot carry megabytes past the limit, nor make
    /// counting the characters long.
    public func validateFilters() throws(RPCError) {
        if let problem = Self.lengthProblem(query, maximum: Self.maxQueryLength) {
            throw CatalogReason.queryTooLong.invalidField("query", problem, subject: "The search")
        }
        if let problem = Self.lengthProblem(category, maximum: Self.maxCategoryLength) {
            throw CatalogReason.invalidCategory.invalidField("category", problem, subject: "The category")
        }
    }

    /// What is wrong with the length of a filter of at most `maximum` characters, or nil.
    private static func lengthProblem(_ text: String?, maximum: Int) -> String? {
        guard let text, text.utf8.count > 4 * maximum || text.count > maximum else { return nil }
        return "must be at most \(maximum) characters (\(4 * maximum) bytes of UTF-8)"
    }
}

/// `GetProduct` request: `{id}`.
public struct GetProductRequest: RPCMessage, Hashable {
    /// The product id.
    public var id: Int

    /// Creates a request.
    public init(id: Int) { self.id = id }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("id", "Int")]
}

/// `BatchGetProducts` request: `{ids}`, at most 100.
public struct BatchGetProductsRequest: RPCMessage, Hashable {
    /// The product ids to fetch.
    public var ids: [Int]

    /// Creates a request.
    public init(ids: [Int]) { self.ids = ids }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("ids", "[Int]")]
}

/// `AddFavorite` request: `{productId}`.
public struct AddFavoriteRequest: RPCMessage, Hashable {
    /// The product to mark as a favorite.
    public var productId: Int

    /// Creates a request.
    public init(productId: Int) { self.productId = productId }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("productId", "Int")]
}

/// `RemoveFavorite` request: `{productId}`.
public struct RemoveFavoriteRequest: RPCMessage, Hashable {
    /// The product to unmark.
    public var productId: Int

    /// Creates a request.
    public init(productId: Int) { self.productId = productId }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("productId", "Int")]
}

/// `ListFavorites` request: `{pageSize?, pageToken?}`.
public typealias ListFavoritesRequest = PageRequest
