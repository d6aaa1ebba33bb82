public import RPC
public import JSON

/// An amount of money in minor units (API.md §2): never a floating-point number.
public struct Money: RPCMessage, Hashable {
    /// The amount in the currency's minor units, e.g. cents.
    public var amount: Int
    /// The ISO 4217 currency code, e.g. "USD".
    public var currency: String

    /// Creates an amount of money.
    public init(amount: Int, currency: String) {
        self.amount = amount
        self.currency = currency
    }

    /// No money in `currency`, the start of a sum.
    public static func zero(currency: String) -> Money { Money(amount: 0, currency: currency) }

    /// The largest unit price (minor units) a product may have: the most lines of a basket (100)
    /// at the most units each (10) still add up without overflow, and so does an order of them.
    /// catalog-svc refuses a higher price; basket-svc and order-svc refuse to use one.
    public static let maximumUnitAmount = Int.max / (BasketContract.maxLines * BasketContract.countRange.upperBound)

    /// Whether this amount may be a unit price: 0 to ``maximumUnitAmount``.
    public var isUnitPrice: Bool { (0...Self.maximumUnitAmount).contains(amount) }

    /// This amount times `count`, e.g. a line total from a unit price. Traps on overflow: for a
    /// unit price up to ``maximumUnitAmount`` and a count up to 10 it cannot; code handed other
    /// values checks first.
    public func multiplied(by count: Int) -> Money { Money(amount: amount * count, currency: currency) }

    /// Whether `code` is shaped as an ISO 4217 currency code: three upper-case ASCII letters.
    public static func isCurrencyCode(_ code: String) -> Bool {
        code.utf8.count == 3 && code.utf8.allSatisfy { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("amount", "Int"), FieldDescriptor("currency", "String")]
}

/// Page-size rules shared by every list method (API.md §2; AIP-158).
public enum PageSize {
    /// The page size served when a request gives none, or 0.
    public static let `default` = 20
    /// The largest page served; larger requests are capped to it rather than rejected.
    public static let maximum = 100

    /// The page size to serve for `requested`: the default for absent, zero or negative, capped at the maximum.
    public static func effective(_ requested: Int?) -> Int {
        guard let requested, requested > 0 else { return PageSize.default }
        return min(requested, maximum)
    }
}

/// A request with an optional `pageSize` field.
public protocol PageSizedRequest {
    /// The requested page size; absent means the default.
    var pageSize: Int? { get }
}

extension PageSizedRequest {
    /// The page size to serve: 20 when absent or 0, never more than 100.
    public var effectivePageSize: Int { PageSize.effective(pageSize) }

    /// Rejects a negative page size with `INVALID_ARGUMENT` naming `pageSize`, as AIP-158 asks.
    public func validatePageSize() throws(RPCError) {
        if let pageSize, pageSize < 0 {
            throw CommonReason.invalidPageSize.invalidField("pageSize", "must not be negative", subject: "The page size")
        }
    }
}

/// A list request with the page fields of API.md §2: `pageSize?` and `pageToken?`.
public protocol PagedRequest: PageSizedRequest {
    /// The `nextPageToken` of the previous page; absent or "" for the first page.
    var pageToken: String? { get }
}

extension PagedRequest {
    /// The page token, "" meaning the first page.
    public var effectivePageToken: String { pageToken ?? "" }
}

/// A request that is nothing but a page: `{pageSize?, pageToken?}` (ListFavorites, ListOrders).
public struct PageRequest: RPCMessage, Hashable, PagedRequest {
    /// The page size; 20 when absent, at most 100.
    public var pageSize: Int?
    /// The previous page's `nextPageToken`; absent for the first page.
    public var pageToken: String?

    /// Creates a request.
    public init(pageSize: Int? = nil, pageToken: String? = nil) {
        self.pageSize = pageSize
        self.pageToken = pageToken
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [
        FieldDescriptor("pageSize", "Int", optional: true), FieldDescriptor("pageToken", "String", optional: true),
    ]
}

/// A stable error reason of API.md, sent in the `shop-error-reason` trailer, with the one gRPC
/// code it always travels with.
public protocol ErrorReason: RawRepresentable, CaseIterable, Hashable, Sendable where RawValue == String {
    /// The gRPC status code this reason is sent with.
    var code: RPCCode { get }
}

/// Reasons every service's list methods share.
public enum CommonReason: String, ErrorReason {
    /// A negative `pageSize` (not in API.md's tables).
    case invalidPageSize = "INVALID_PAGE_SIZE"

    /// The gRPC status code this reason is sent with.
    public var code: RPCCode { .invalidArgument }
}

extension ErrorReason {
    /// An error carrying this reason and its code that names one bad field, with a
    /// `fieldViolations` detail (``RPCError/invalidField(_:_:reason:)``).
    public func invalidField(_ field: String, _ description: String) -> RPCError {
        var error = RPCError.invalidField(field, description, reason: rawValue)
        error.code = code
        return error
    }

    /// An error carrying this reason and its code that names one bad field, its message in the
    /// user's words (``RPCError/invalidField(_:_:reason:subject:)``).
    public func invalidField(_ field: String, _ description: String, subject: String) -> RPCError {
        var error = RPCError.invalidField(field, description, reason: rawValue, subject: subject)
        error.code = code
        return error
    }

    /// An error carrying this reason and its code, with `message` for people.
    public func error(_ message: String, details: JSONValue? = nil) -> RPCError {
        RPCError(code: code, reason: rawValue, message: message, details: details)
    }

    /// Whether `error` carries this reason.
    public func matches(_ error: RPCError) -> Bool { error.reason == rawValue }

    /// This reason for a caller over a rate limit who may try again after `wait`: `message`
    /// ends "try again in N s" and the details carry `{"retryAfterSeconds": N}`, N the wait
    /// rounded up to whole seconds (at least 1), for clients to wait before they retry.
    public func error(_ message: String, retryAfter wait: Duration) -> RPCError {
        let (whole, fraction) = wait.components
        let seconds = max(1, Int(whole) + (fraction > 0 ? 1 : 0))
        return error("\(message); try again in \(seconds) s.", details: .object(["retryAfterSeconds": .number(Double(seconds))]))
    }
}
