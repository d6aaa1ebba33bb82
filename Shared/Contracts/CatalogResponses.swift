public import RPC

/// `ListProducts` response: `{products, nextPageToken, totalSize, suggestion?}`.
public struct ListProductsResponse: RPCMessage, Hashable {
    /// The page's products.
    public var products: [Product]
    /// The token of the next page; "" on the last page.
    public var nextPageToken: String
    /// How many products match the request across all pages.
    public var totalSize: Int
    /// When the query found nothing: the query with its misspelt words corrected from the
    /// catalog's words ("headphnes" → "headphones"), which does find products; absent otherwise.
    public var suggestion: String?

    /// Creates a response.
    public init(products: [Product], nextPageToken: String = "", totalSize: Int, suggestion: String? = nil) {
        self.products = products
        self.nextPageToken = nextPageToken
        self.totalSize = totalSize
        self.suggestion = suggestion
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [
        FieldDescriptor("products", "[Product]"),
        FieldDescriptor("nextPageToken", "String"),
        FieldDescriptor("totalSize", "Int"),
        FieldDescriptor("suggestion", "String", optional: true),
    ]
}

/// `{product}`: the answer of `GetProduct` and `UpsertProduct`.
public struct ProductResponse: RPCMessage, Hashable {
    /// The product.
    public var product: Product

    /// Creates a response.
    public init(product: Product) { self.product = product }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("product", "Product")]
}

/// `BatchGetProducts` response: `{products, missingIds}`.
public struct BatchGetProductsResponse: RPCMessage, Hashable {
    /// The products found, in the order their ids were asked for.
    public var products: [Product]
    /// The requested ids that name no product.
    public var missingIds: [Int]

    /// Creates a response.
    public init(products: [Product], missingIds: [Int] = []) {
        self.products = products
        self.missingIds = missingIds
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("products", "[Product]"), FieldDescriptor("missingIds", "[Int]")]
}

/// `ListCategories` response: `{categories}`.
public struct ListCategoriesResponse: RPCMessage, Hashable {
    /// Every category, by name.
    public var categories: [Category]

    /// Creates a response.
    public init(categories: [Category]) { self.categories = categories }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("categories", "[Category]")]
}

/// `ListFavorites` response: `{products, nextPageToken}`.
public struct ListFavoritesResponse: RPCMessage, Hashable {
    /// The page's favorite products, most recently added first.
    public var products: [Product]
    /// The token of the next page; "" on the last page.
    public var nextPageToken: String

    /// Creates a response.
    public init(products: [Product], nextPageToken: String = "") {
        self.products = products
        self.nextPageToken = nextPageToken
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [
        FieldDescriptor("products", "[Product]"), FieldDescriptor("nextPageToken", "String"),
    ]
}
