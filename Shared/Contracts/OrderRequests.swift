public import RPC

/// The card `PlaceOrder` charges: `{cardNumber, expMonth, expYear, cvc}`; never stored or logged.
public struct CardDetails: RPCMessage, Hashable, CustomStringConvertible {
    /// The card number, as digits.
    public var cardNumber: String
    /// The expiry month, 1...12.
    public var expMonth: Int
    /// The expiry year, four digits.
    public var expYear: Int
    /// The card verification code, as a string so that leading zeros survive.
    public var cvc: String

    /// Creates card details.
    public init(cardNumber: String, expMonth: Int, expYear: Int, cvc: String) {
        self.cardNumber = cardNumber
        self.expMonth = expMonth
        self.expYear = expYear
        self.cvc = cvc
    }

    /// Describes the card without any of its data, so that logging a request leaks nothing.
    public var description: String { "CardDetails(<redacted>)" }

    /// The JSON fields, for `Describe`.
    public static let fields = [
        FieldDescriptor("cardNumber", "String"),
        FieldDescriptor("expMonth", "Int"),
        FieldDescriptor("expYear", "Int"),
        FieldDescriptor("cvc", "String"),
    ]
}

/// `PlaceOrder` request: `{shippingAddress, payment}`.
public struct PlaceOrderRequest: RPCMessage, Hashable, CustomStringConvertible {
    /// Where to ship the order.
    public var shippingAddress: Address
    /// The card to charge.
    public var payment: CardDetails

    /// Creates a request.
    public init(shippingAddress: Address, payment: CardDetails) {
        self.shippingAddress = shippingAddress
        self.payment = payment
    }

    /// Describes the request without the card's data.
    public var description: String { "PlaceOrderRequest(shippingAddress: \(shippingAddress), payment: \(payment))" }

    /// The JSON fields, for `Describe`.
    public static let fields = [
        FieldDescriptor("shippingAddress", "Address"), FieldDescriptor("payment", "CardDetails"),
    ]
}

/// `GetOrder` request: `{id}`.
public struct GetOrderRequest: RPCMessage, Hashable {
    /// The order id.
    public var id: String

    /// Creates a request.
    public init(id: String) { self.id = id }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("id", "String")]
}

/// `ListOrders` request: `{pageSize?, pageToken?}`.
public typealias ListOrdersRequest = PageRequest

/// `ListOrders` response: `{orders, nextPageToken}`, newest first.
public struct ListOrdersResponse: RPCMessage, Hashable {
    /// The page's orders, newest first.
    public var orders: [Order]
    /// The token of the next page; "" on the last page.
    public var nextPageToken: String

    /// Creates a response.
    public init(orders: [Order], nextPageToken: String = "") {
        self.orders = orders
        self.nextPageToken = nextPageToken
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("orders", "[Order]"), FieldDescriptor("nextPageToken", "String")]
}

/// `CancelOrder` request: `{id}`.
public struct CancelOrderRequest: RPCMessage, Hashable {
    /// The order id.
    public var id: String

    /// Creates a request.
    public init(id: String) { self.id = id }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("id", "String")]
}
