public import RPC

/// `shop.gateway.v1.StorefrontService` (API.md §7): screens the gateway composes from several
/// services; a user token is optional and adds the caller's favorites and basket.
public enum StorefrontContract {
    /// The fully qualified service name.
    public static let service = "shop.gateway.v1.StorefrontService"

    /// `GetProductPage`: a product with the caller's favorite flag and basket line.
    public static let getProductPage = MethodDescriptor<GetProductPageRequest, GetProductPageResponse>(
        service: service, method: "GetProductPage", kind: .unary, auth: .optionalUser, idempotent: true)
    /// `GetHome`: the categories, a first page of products and the caller's basket size.
    public static let getHome = MethodDescriptor<GetHomeRequest, GetHomeResponse>(
        service: service, method: "GetHome", kind: .unary, auth: .optionalUser, idempotent: true)

    /// Every method, in API.md order.
    public static let all: [MethodInfo] = [getProductPage.info, getHome.info]
}

/// The stable error reasons the gateway itself answers with (API.md §7).
public enum GatewayReason: String, ErrorReason {
    /// The client exceeded its rate limit.
    case rateLimited = "RATE_LIMITED"
    /// The service behind the method is down or unreachable.
    case upstreamUnavailable = "UPSTREAM_UNAVAILABLE"
    /// The caller already holds as many open streams of the method as one user may (watches).
    case tooManyWatches = "TOO_MANY_WATCHES"

    /// The gRPC status code this reason is sent with.
    public var code: RPCCode {
        switch self {
        case .rateLimited, .tooManyWatches: .resourceExhausted
        case .upstreamUnavailable: .unavailable
        }
    }
}

/// `GetProductPage` request: `{productId}`.
public struct GetProductPageRequest: RPCMessage, Hashable {
    /// The product to show.
    public var productId: Int

    /// Creates a request.
    public init(productId: Int) { self.productId = productId }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("productId", "Int")]
}

/// `GetProductPage` response: `{product, isFavorite, basketItem?}`.
public struct GetProductPageResponse: RPCMessage, Hashable {
    /// The product.
    public var product: Product
    /// Whether the caller marked it as a favorite; false without a token.
    public var isFavorite: Bool
    /// The caller's basket line for this product; absent without a token or line.
    public var basketItem: BasketItem?

    /// Creates a response.
    public init(product: Product, isFavorite: Bool = false, basketItem: BasketItem? = nil) {
        self.product = product
        self.isFavorite = isFavorite
        self.basketItem = basketItem
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [
        FieldDescriptor("product", "Product"),
        FieldDescriptor("isFavorite", "Bool"),
        FieldDescriptor("basketItem", "BasketItem", optional: true),
    ]
}

/// `GetHome` request: `{category?, pageSize?}`.
public struct GetHomeRequest: RPCMessage, Hashable, PageSizedRequest {
    /// Only products of this category; absent or "" for all.
    public var category: String?
    /// The size of the first page of products; 20 when absent, at most 100.
    public var pageSize: Int?

    /// Creates a request.
    public init(category: String? = nil, pageSize: Int? = nil) {
        self.category = category
        self.pageSize = pageSize
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [
        FieldDescriptor("category", "String", optional: true), FieldDescriptor("pageSize", "Int", optional: true),
    ]
}

/// `GetHome` response: `{categories, products, nextPageToken, basketItemCount}`.
public struct GetHomeResponse: RPCMessage, Hashable {
    /// Every category with its product count.
    public var categories: [Category]
    /// The first page of products, as `ListProducts` with the same category returns it.
    public var products: [Product]
    /// The token that continues with `ListProducts`; "" on the last page.
    public var nextPageToken: String
    /// The caller's basket `itemCount`; 0 without a token.
    public var basketItemCount: Int

    /// Creates a response.
    public init(categories: [Category], products: [Product], nextPageToken: String = "", basketItemCount: Int = 0) {
        self.categories = categories
        self.products = products
        self.nextPageToken = nextPageToken
        self.basketItemCount = basketItemCount
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [
        FieldDescriptor("categories", "[Category]"),
        FieldDescriptor("products", "[Product]"),
        FieldDescriptor("nextPageToken", "String"),
        FieldDescriptor("basketItemCount", "Int"),
    ]
}
