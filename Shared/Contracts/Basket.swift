public import RPC

/// One line of a basket (API.md §2); title, price and image come from catalog-svc.
public struct BasketItem: RPCMessage, Hashable {
    /// The line's id, a UUID.
    public var id: String
    /// The product on this line.
    public var productId: Int
    /// The product's title.
    public var productTitle: String
    /// The product's current unit price.
    public var unitPrice: Money
    /// The URL of the product's image.
    public var imageURL: String
    /// How many units, 1...10.
    public var count: Int
    /// The unit price times the count.
    public var lineTotal: Money

    /// Creates a line.
    public init(
        id: String, productId: Int, productTitle: String, unitPrice: Money, imageURL: String, count: Int,
        lineTotal: Money
    ) {
        self.id = id
        self.productId = productId
        self.productTitle = productTitle
        self.unitPrice = unitPrice
        self.imageURL = imageURL
        self.count = count
        self.lineTotal = lineTotal
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [
        FieldDescriptor("id", "String"),
        FieldDescriptor("productId", "Int"),
        FieldDescriptor("productTitle", "String"),
        FieldDescriptor("unitPrice", "Money"),
        FieldDescriptor("imageURL", "String"),
        FieldDescriptor("count", "Int"),
        FieldDescriptor("lineTotal", "Money"),
    ]
}

/// A user's basket (API.md §2): the answer of every basket method and the `WatchBasket` stream.
public struct Basket: RPCMessage, Hashable {
    /// The lines, oldest first.
    public var items: [BasketItem]
    /// The sum of the lines' counts.
    public var itemCount: Int
    /// The sum of the line totals.
    public var total: Money
    /// A number that goes up by one on every change, for `expectedVersion`.
    public var version: Int
    /// When the basket last changed, as an RFC 3339 timestamp.
    public var updatedAt: String

    /// Creates a basket.
    public init(items: [BasketItem], itemCount: Int, total: Money, version: Int, updatedAt: String) {
        self.items = items
        self.itemCount = itemCount
        self.total = total
        self.version = version
        self.updatedAt = updatedAt
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [
        FieldDescriptor("items", "[BasketItem]"),
        FieldDescriptor("itemCount", "Int"),
        FieldDescriptor("total", "Money"),
        FieldDescriptor("version", "Int"),
        FieldDescriptor("updatedAt", "String"),
    ]
}
