public import RPC

/// Where an order ships to (API.md §2).
public struct Address: RPCMessage, Hashable {
    /// The recipient's name.
    public var name: String
    /// The first address line.
    public var line1: String
    /// The second address line, if any.
    public var line2: String?
    /// The city.
    public var city: String
    /// The postal code.
    public var postalCode: String
    /// The ISO 3166-1 alpha-2 country code, e.g. "US".
    public var country: String

    /// Creates an address.
    public init(name: String, line1: String, line2: String? = nil, city: String, postalCode: String, country: String) {
        self.name = name
        self.line1 = line1
        self.line2 = line2
        self.city = city
        self.postalCode = postalCode
        self.country = country
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [
        FieldDescriptor("name", "String"),
        FieldDescriptor("line1", "String"),
        FieldDescriptor("line2", "String", optional: true),
        FieldDescriptor("city", "String"),
        FieldDescriptor("postalCode", "String"),
        FieldDescriptor("country", "String"),
    ]
}

/// Where an order stands.
public enum OrderStatus: String, Codable, Sendable, CaseIterable {
    /// Recorded, payment not settled yet.
    case pending = "PENDING"
    /// Paid.
    case paid = "PAID"
    /// The card was declined; the basket was left as it was.
    case paymentFailed = "PAYMENT_FAILED"
    /// Cancelled by the user.
    case cancelled = "CANCELLED"
}

/// What is kept of the card an order was paid with: `{brand, last4}`.
public struct PaymentSummary: RPCMessage, Hashable {
    /// The card brand, e.g. "visa".
    public var brand: String
    /// The last four digits of the card number.
    public var last4: String

    /// Creates a summary.
    public init(brand: String, last4: String) {
        self.brand = brand
        self.last4 = last4
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("brand", "String"), FieldDescriptor("last4", "String")]
}

/// One line of an order (API.md §2), priced when the order was placed.
public struct OrderItem: RPCMessage, Hashable {
    /// The product ordered.
    public var productId: Int
    /// The product's title when ordered.
    public var productTitle: String
    /// The unit price charged.
    public var unitPrice: Money
    /// How many units.
    public var count: Int
    /// The unit price times the count.
    public var lineTotal: Money

    /// Creates a line.
    public init(productId: Int, productTitle: String, unitPrice: Money, count: Int, lineTotal: Money) {
        self.productId = productId
        self.productTitle = productTitle
        self.unitPrice = unitPrice
        self.count = count
        self.lineTotal = lineTotal
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [
        FieldDescriptor("productId", "Int"),
        FieldDescriptor("productTitle", "String"),
        FieldDescriptor("unitPrice", "Money"),
        FieldDescriptor("count", "Int"),
        FieldDescriptor("lineTotal", "Money"),
    ]
}

/// An order (API.md §2).
public struct Order: RPCMessage, Hashable {
    /// The order id.
    public var id: String
    /// Where the order stands.
    public var status: OrderStatus
    /// The lines ordered.
    public var items: [OrderItem]
    /// The sum of the line totals.
    public var total: Money
    /// Where the order ships to.
    public var shippingAddress: Address
    /// The card charged; absent while no payment was attempted.
    public var payment: PaymentSummary?
    /// When the order was placed, as an RFC 3339 timestamp.
    public var createdAt: String
    /// When the order last changed, as an RFC 3339 timestamp.
    public var updatedAt: String

    /// Creates an order.
    public init(
        id: String, status: OrderStatus, items: [OrderItem], total: Money, shippingAddress: Address,
        payment: PaymentSummary? = nil, createdAt: String, updatedAt: String
    ) {
        self.id = id
        self.status = status
        self.items = items
        self.total = total
        self.shippingAddress = shippingAddress
        self.payment = payment
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [
        FieldDescriptor("id", "String"),
        FieldDescriptor("status", "String"),
        FieldDescriptor("items", "[OrderItem]"),
        FieldDescriptor("total", "Money"),
        FieldDescriptor("shippingAddress", "Address"),
        FieldDescriptor("payment", "PaymentSummary", optional: true),
        FieldDescriptor("createdAt", "String"),
        FieldDescriptor("updatedAt", "String"),
    ]
}
