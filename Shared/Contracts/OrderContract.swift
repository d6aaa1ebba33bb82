public import RPC
public import JSON

/// `shop.order.v1.OrderService` (API.md §6): placing, reading and cancelling the caller's orders.
public enum OrderContract {
    /// The fully qualified service name.
    public static let service = "shop.order.v1.OrderService"
    /// The metadata key `PlaceOrder` requires; the same key from the same user returns the first answer.
    public static let idempotencyKeyHeader = "idempotency-key"
    /// The lengths an idempotency key may have.
    public static let idempotencyKeyLength = 1...255

    /// `PlaceOrder`: orders the caller's basket and pays with a card; needs `idempotency-key`.
    public static let placeOrder = MethodDescriptor<PlaceOrderRequest, Order>(
        service: service, method: "PlaceOrder", kind: .unary, auth: .user)
    /// `GetOrder`: one of the caller's orders.
    public static let getOrder = MethodDescriptor<GetOrderRequest, Order>(
        service: service, method: "GetOrder", kind: .unary, auth: .user, idempotent: true)
    /// `ListOrders`: a page of the caller's orders, newest first.
    public static let listOrders = MethodDescriptor<ListOrdersRequest, ListOrdersResponse>(
        service: service, method: "ListOrders", kind: .unary, auth: .user, idempotent: true)
    /// `CancelOrder`: cancels one of the caller's orders.
    public static let cancelOrder = MethodDescriptor<CancelOrderRequest, Order>(
        service: service, method: "CancelOrder", kind: .unary, auth: .user)

    /// Every method, in API.md order.
    public static let all: [MethodInfo] = [placeOrder.info, getOrder.info, listOrders.info, cancelOrder.info]
}

/// The stable error reasons of order-svc (API.md §6).
public enum OrderReason: String, ErrorReason {
    /// The caller's basket has no lines.
    case emptyBasket = "EMPTY_BASKET"
    /// A product of the basket has too little stock.
    case outOfStock = "OUT_OF_STOCK"
    /// The payment provider declined the card; the order is left in `PAYMENT_FAILED`.
    case paymentDeclined = "PAYMENT_DECLINED"
    /// The card details are malformed, fail the Luhn check or are expired.
    case invalidCard = "INVALID_CARD"
    /// `PlaceOrder` came without a valid `idempotency-key`.
    case idempotencyKeyRequired = "IDEMPOTENCY_KEY_REQUIRED"
    /// The idempotency key was used before with a different request.
    case idempotencyKeyReused = "IDEMPOTENCY_KEY_REUSED"
    /// A call with the same idempotency key is still running.
    case requestInProgress = "REQUEST_IN_PROGRESS"
    /// The caller has no order with this id.
    case orderNotFound = "ORDER_NOT_FOUND"
    /// The order's status does not allow cancelling it.
    case orderNotCancellable = "ORDER_NOT_CANCELLABLE"
    /// A `ListOrders` page token is malformed (not in API.md's table; as in catalog-svc).
    case invalidPageToken = "INVALID_PAGE_TOKEN"
    /// A `PlaceOrder` shipping address breaks a field rule; details name the field (not in
    /// API.md's table).
    case invalidAddress = "INVALID_ADDRESS"

    /// The gRPC status code this reason is sent with.
    public var code: RPCCode {
        switch self {
        case .emptyBasket, .outOfStock, .paymentDeclined, .orderNotCancellable: .failedPrecondition
        case .invalidCard, .idempotencyKeyRequired, .idempotencyKeyReused, .invalidPageToken, .invalidAddress: .invalidArgument
        case .requestInProgress: .aborted
        case .orderNotFound: .notFound
        }
    }

    /// The message API.md fixes for this reason, which clients may show as is; nil where it fixes none.
    public var fixedMessage: String? {
        switch self {
        case .emptyBasket: "Your basket is empty. Add some products first."
        default: nil
        }
    }
}

/// One product whose stock does not cover what an order wants: an entry of the `shortages`
/// detail of `OUT_OF_STOCK` from catalog-svc's `ReserveStock` and order-svc's `PlaceOrder`
/// (`{"productId", "available", "wanted"}`, beside the `productIds` API.md names).
public struct StockShortage: Sendable, Hashable, Codable {
    /// The product.
    public var productId: Int
    /// The units in stock now; 0 when sold out or no longer sold.
    public var available: Int
    /// The units the order wants.
    public var wanted: Int

    /// Creates a shortage.
    public init(productId: Int, available: Int, wanted: Int) {
        self.productId = productId
        self.available = available
        self.wanted = wanted
    }

    /// The detail key holding the shortages.
    public static let detailKey = "shortages"

    /// "product 25 has 7 left (10 wanted)", or "product 3 is sold out".
    public var clause: String {
        available > 0
            ? "product \(productId) has \(available) left (\(wanted) wanted)" : "product \(productId) is sold out"
    }

    /// The entry of the `shortages` detail.
    public var detail: JSONValue {
        .object([
            "productId": .number(Double(productId)), "available": .number(Double(available)),
            "wanted": .number(Double(wanted)),
        ])
    }

    /// The message of `OUT_OF_STOCK` for `shortages`, saying how many are left of each:
    /// "Not enough stock: product 25 has 7 left (10 wanted); product 3 is sold out."
    public static func message(_ shortages: [StockShortage]) -> String {
        "Not enough stock: \(shortages.map(\.clause).joined(separator: "; "))."
    }

    /// The details of `OUT_OF_STOCK` for `shortages`: `productIds` and `shortages`.
    public static func details(_ shortages: [StockShortage]) -> JSONValue {
        .object([
            "productIds": .array(shortages.map { .number(Double($0.productId)) }),
            detailKey: .array(shortages.map(\.detail)),
        ])
    }

    /// The shortages listed in `details`; empty when it has none (a peer that sends only
    /// `productIds`). Entries that are not whole numbers are skipped.
    public static func list(in details: JSONValue?) -> [StockShortage] {
        (details?[detailKey]?.arrayValue ?? []).compactMap { entry in
            guard let productId = integer(entry["productId"]), let available = integer(entry["available"]),
                let wanted = integer(entry["wanted"])
            else { return nil }
            return StockShortage(productId: productId, available: available, wanted: wanted)
        }
    }

    /// A JSON number that is a whole `Int`, or nil.
    private static func integer(_ value: JSONValue?) -> Int? {
        guard case .number(let number)? = value, let whole = Int(exactly: number) else { return nil }
        return whole
    }
}
