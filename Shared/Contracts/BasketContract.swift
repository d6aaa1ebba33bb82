public import RPC

/// `shop.basket.v1.BasketService` (API.md §5): the caller's basket; no request names another user's.
public enum BasketContract {
    /// The fully qualified service name.
    public static let service = "shop.basket.v1.BasketService"
    /// The counts a line may have.
    public static let countRange = 1...10
    /// The most lines a basket holds.
    public static let maxLines = 100

    /// `GetBasket`: the caller's basket.
    public static let getBasket = MethodDescriptor<Empty, Basket>(
        service: service, method: "GetBasket", kind: .unary, auth: .user, idempotent: true)
    /// `AddItem`: adds a product as a new line.
    public static let addItem = MethodDescriptor<AddItemRequest, Basket>(
        service: service, method: "AddItem", kind: .unary, auth: .user)
    /// `UpdateItemCount`: sets a line's count; 0 removes the line.
    public static let updateItemCount = MethodDescriptor<UpdateItemCountRequest, Basket>(
        service: service, method: "UpdateItemCount", kind: .unary, auth: .user)
    /// `RemoveItem`: removes a line.
    public static let removeItem = MethodDescriptor<RemoveItemRequest, Basket>(
        service: service, method: "RemoveItem", kind: .unary, auth: .user)
    /// `ClearBasket`: removes every line.
    public static let clearBasket = MethodDescriptor<ClearBasketRequest, Basket>(
        service: service, method: "ClearBasket", kind: .unary, auth: .user)
    /// `WatchBasket`: the current basket, then the latest state after each change.
    public static let watchBasket = MethodDescriptor<Empty, Basket>(
        service: service, method: "WatchBasket", kind: .serverStreaming, auth: .user, idempotent: true)

    /// Every method, in API.md order.
    public static let all: [MethodInfo] = [
        getBasket.info, addItem.info, updateItemCount.info, removeItem.info, clearBasket.info, watchBasket.info,
    ]
}

/// The stable error reasons of basket-svc (API.md §5).
public enum BasketReason: String, ErrorReason {
    /// No product has the given id.
    case productNotFound = "PRODUCT_NOT_FOUND"
    /// The product already has a line; change its count instead.
    case alreadyInBasket = "ALREADY_IN_BASKET"
    /// A count outside 1...10 (or 0...10 for `UpdateItemCount`).
    case invalidCount = "INVALID_COUNT"
    /// The basket already has 100 lines.
    case basketFull = "BASKET_FULL"
    /// No line of the caller's basket has the given id.
    case itemNotFound = "ITEM_NOT_FOUND"
    /// The basket's version is not the `expectedVersion` of the request.
    case versionConflict = "VERSION_CONFLICT"
    /// An `itemId` that is empty or not a UUID (not in API.md's table).
    case invalidItemID = "INVALID_ITEM_ID"
    /// A negative `expectedVersion` (not in API.md's table).
    case invalidVersion = "INVALID_VERSION"
    /// The count asked for is more than the catalog has in stock; details `{"productId", "available"}`.
    case outOfStock = "OUT_OF_STOCK"

    /// The gRPC status code this reason is sent with.
    public var code: RPCCode {
        switch self {
        case .productNotFound, .itemNotFound: .notFound
        case .alreadyInBasket: .alreadyExists
        case .invalidCount, .invalidItemID, .invalidVersion: .invalidArgument
        case .basketFull: .resourceExhausted
        case .outOfStock: .failedPrecondition
        case .versionConflict: .aborted
        }
    }

    /// The message API.md fixes for this reason, which clients may show as is; nil where it fixes none.
    public var fixedMessage: String? {
        switch self {
        case .alreadyInBasket: "The product is already in basket."
        default: nil
        }
    }
}

/// `AddItem` request: `{productId, count?}`, count 1 when absent.
public struct AddItemRequest: RPCMessage, Hashable {
    /// The product to add.
    public var productId: Int
    /// How many units, 1...10.
    public var count: Int

    /// Creates a request.
    public init(productId: Int, count: Int = 1) {
        self.productId = productId
        self.count = count
    }

    /// Decodes a request, taking 1 for an absent count.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        productId = try container.decode(Int.self, forKey: .productId)
        count = try container.decodeIfPresent(Int.self, forKey: .count) ?? 1
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("productId", "Int"), FieldDescriptor("count", "Int", optional: true)]
}

/// `UpdateItemCount` request: `{itemId, count, expectedVersion?}`.
public struct UpdateItemCountRequest: RPCMessage, Hashable {
    /// The line to change.
    public var itemId: String
    /// The new count: 0 removes the line, 1...10 sets it.
    public var count: Int
    /// The basket version the change is based on; absent to change unconditionally.
    public var expectedVersion: Int?

    /// Creates a request.
    public init(itemId: String, count: Int, expectedVersion: Int? = nil) {
        self.itemId = itemId
        self.count = count
        self.expectedVersion = expectedVersion
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [
        FieldDescriptor("itemId", "String"), FieldDescriptor("count", "Int"),
        FieldDescriptor("expectedVersion", "Int", optional: true),
    ]
}

/// `RemoveItem` request: `{itemId}`.
public struct RemoveItemRequest: RPCMessage, Hashable {
    /// The line to remove.
    public var itemId: String

    /// Creates a request.
    public init(itemId: String) { self.itemId = itemId }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("itemId", "String")]
}

/// `ClearBasket` request: `{expectedVersion?}`.
public struct ClearBasketRequest: RPCMessage, Hashable {
    /// The basket version the change is based on; absent to clear unconditionally.
    public var expectedVersion: Int?

    /// Creates a request.
    public init(expectedVersion: Int? = nil) { self.expectedVersion = expectedVersion }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("expectedVersion", "Int", optional: true)]
}
