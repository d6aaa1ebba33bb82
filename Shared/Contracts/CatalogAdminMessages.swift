public import RPC

/// `UpsertProduct` request: `{product}`; a product id of 0 (or none) creates a product.
public struct UpsertProductRequest: RPCMessage, Hashable {
    /// The product to create or replace.
    public var product: Product

    /// Creates a request.
    public init(product: Product) { self.product = product }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("product", "Product")]
}

/// `DeleteProduct` request: `{id}`.
public struct DeleteProductRequest: RPCMessage, Hashable {
    /// The product id.
    public var id: Int

    /// Creates a request.
    public init(id: Int) { self.id = id }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("id", "Int")]
}

/// One message of the `ImportProducts` stream: `{product}`, upserted like `UpsertProduct`.
public struct ImportProductsRequest: RPCMessage, Hashable {
    /// The product to create or replace.
    public var product: Product

    /// Creates a message.
    public init(product: Product) { self.product = product }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("product", "Product")]
}

/// `ImportProducts` response: `{created, updated, failed}`.
public struct ImportProductsResponse: RPCMessage, Hashable {
    /// How many products were created.
    public var created: Int
    /// How many existing products were replaced.
    public var updated: Int
    /// The messages that were rejected, and why.
    public var failed: [ImportFailure]

    /// Creates a response.
    public init(created: Int, updated: Int, failed: [ImportFailure] = []) {
        self.created = created
        self.updated = updated
        self.failed = failed
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [
        FieldDescriptor("created", "Int"), FieldDescriptor("updated", "Int"),
        FieldDescriptor("failed", "[ImportFailure]"),
    ]
}

/// A rejected `ImportProducts` message: `{index, reason}`.
public struct ImportFailure: RPCMessage, Hashable {
    /// The zero-based position of the message in the stream.
    public var index: Int
    /// Why it was rejected, for people.
    public var reason: String

    /// Creates a failure.
    public init(index: Int, reason: String) {
        self.index = index
        self.reason = reason
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("index", "Int"), FieldDescriptor("reason", "String")]
}

/// One line of a stock reservation: `{productId, count}`.
public struct StockReservationItem: RPCMessage, Hashable {
    /// The product to reserve.
    public var productId: Int
    /// How many units to reserve.
    public var count: Int

    /// Creates a line.
    public init(productId: Int, count: Int) {
        self.productId = productId
        self.count = count
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("productId", "Int"), FieldDescriptor("count", "Int")]
}

/// `ReserveStock` request: `{reservationId, items}`; repeating a reservation id changes nothing.
public struct ReserveStockRequest: RPCMessage, Hashable {
    /// The caller's id for this reservation, e.g. the order id.
    public var reservationId: String
    /// The lines to reserve, all or none.
    public var items: [StockReservationItem]

    /// Creates a request.
    public init(reservationId: String, items: [StockReservationItem]) {
        self.reservationId = reservationId
        self.items = items
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [
        FieldDescriptor("reservationId", "String"), FieldDescriptor("items", "[StockReservationItem]"),
    ]
}

/// `ReleaseStock` request: `{reservationId}`; releasing an unknown or released reservation changes nothing.
public struct ReleaseStockRequest: RPCMessage, Hashable {
    /// The reservation to give back.
    public var reservationId: String

    /// Creates a request.
    public init(reservationId: String) { self.reservationId = reservationId }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("reservationId", "String")]
}
