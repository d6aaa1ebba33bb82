public import RPC

/// `shop.catalog.v1.CatalogService` (API.md §4): products, search, favorites and stock.
public enum CatalogContract {
    /// The fully qualified service name.
    public static let service = "shop.catalog.v1.CatalogService"
    /// The most ids one `BatchGetProducts` call may name.
    public static let maxBatchSize = 100

    /// `ListProducts`: a page of products, filtered, searched and sorted.
    public static let listProducts = MethodDescriptor<ListProductsRequest, ListProductsResponse>(
        service: service, method: "ListProducts", kind: .unary, idempotent: true)
    /// `GetProduct`: one product by id.
    public static let getProduct = MethodDescriptor<GetProductRequest, ProductResponse>(
        service: service, method: "GetProduct", kind: .unary, idempotent: true)
    /// `BatchGetProducts`: up to 100 products by id, and the ids that do not exist.
    public static let batchGetProducts = MethodDescriptor<BatchGetProductsRequest, BatchGetProductsResponse>(
        service: service, method: "BatchGetProducts", kind: .unary, idempotent: true)
    /// `ListCategories`: every category with its product count.
    public static let listCategories = MethodDescriptor<Empty, ListCategoriesResponse>(
        service: service, method: "ListCategories", kind: .unary, idempotent: true)
    /// `AddFavorite`: marks a product as a favorite of the caller; idempotent.
    public static let addFavorite = MethodDescriptor<AddFavoriteRequest, Empty>(
        service: service, method: "AddFavorite", kind: .unary, auth: .user, idempotent: true)
    /// `RemoveFavorite`: unmarks a favorite of the caller; idempotent.
    public static let removeFavorite = MethodDescriptor<RemoveFavoriteRequest, Empty>(
        service: service, method: "RemoveFavorite", kind: .unary, auth: .user, idempotent: true)
    /// `ListFavorites`: a page of the caller's favorite products.
    public static let listFavorites = MethodDescriptor<ListFavoritesRequest, ListFavoritesResponse>(
        service: service, method: "ListFavorites", kind: .unary, auth: .user, idempotent: true)
    /// `UpsertProduct`: creates a product (id 0 or absent) or replaces one (admin).
    public static let upsertProduct = MethodDescriptor<UpsertProductRequest, ProductResponse>(
        service: service, method: "UpsertProduct", kind: .unary, auth: .admin)
    /// `DeleteProduct`: deletes a product (admin).
    public static let deleteProduct = MethodDescriptor<DeleteProductRequest, Empty>(
        service: service, method: "DeleteProduct", kind: .unary, auth: .admin)
    /// `ImportProducts`: upserts a stream of products and reports per-message failures (admin).
    public static let importProducts = MethodDescriptor<ImportProductsRequest, ImportProductsResponse>(
        service: service, method: "ImportProducts", kind: .clientStreaming, auth: .admin)
    /// `ReserveStock`: takes stock for an order, all lines or none; idempotent per reservation id (internal).
    public static let reserveStock = MethodDescriptor<ReserveStockRequest, Empty>(
        service: service, method: "ReserveStock", kind: .unary, auth: .internal, idempotent: true)
    /// `ReleaseStock`: gives a reservation's stock back; idempotent (internal).
    public static let releaseStock = MethodDescriptor<ReleaseStockRequest, Empty>(
        service: service, method: "ReleaseStock", kind: .unary, auth: .internal, idempotent: true)

    /// Every method, in API.md order.
    public static let all: [MethodInfo] = [
        listProducts.info, getProduct.info, batchGetProducts.info, listCategories.info, addFavorite.info,
        removeFavorite.info, listFavorites.info, upsertProduct.info, deleteProduct.info, importProducts.info,
        reserveStock.info, releaseStock.info,
    ]
}

/// The stable error reasons of catalog-svc (API.md §4).
public enum CatalogReason: String, ErrorReason {
    /// A page token is malformed or belongs to a different query.
    case invalidPageToken = "INVALID_PAGE_TOKEN"
    /// No product has the given id.
    case productNotFound = "PRODUCT_NOT_FOUND"
    /// A reservation asks for more units than are in stock; details name the product ids.
    case outOfStock = "OUT_OF_STOCK"
    /// A `ListProducts` query is over 500 characters or 2,000 bytes (not in API.md's table;
    /// ``ListProductsRequest/validateFilters()``).
    case queryTooLong = "QUERY_TOO_LONG"
    /// A `ListProducts` (or gateway `GetHome`) category is over 100 characters or 400 bytes
    /// (not in API.md's table; ``ListProductsRequest/validateFilters()``).
    case invalidCategory = "INVALID_CATEGORY"
    /// `BatchGetProducts` asks for more than 100 ids (not in API.md's table).
    case tooManyIDs = "TOO_MANY_IDS"
    /// An `UpsertProduct` or imported product breaks a field rule (not in API.md's table).
    case invalidProduct = "INVALID_PRODUCT"
    /// A `ReserveStock` or `ReleaseStock` request has a bad reservation id or line (not in API.md's table).
    case invalidReservation = "INVALID_RESERVATION"

    /// The gRPC status code this reason is sent with.
    public var code: RPCCode {
        switch self {
        case .invalidPageToken, .queryTooLong, .invalidCategory, .tooManyIDs, .invalidProduct, .invalidReservation: .invalidArgument
        case .productNotFound: .notFound
        case .outOfStock: .failedPrecondition
        }
    }
}
