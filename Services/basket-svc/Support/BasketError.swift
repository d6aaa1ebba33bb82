import Contracts
import RPC

/// Why basket-svc refuses a call, each case knowing the gRPC code and reason it is sent with
/// (API.md §5, README "Choices where API.md is silent").
enum BasketError: Error, Sendable, Hashable, RPCErrorConvertible {
    /// The catalog has no product `productID`.
    case productNotFound(productID: Int)
    /// The product already has a line.
    case alreadyInBasket
    /// `field` is a count outside `allowed`.
    case invalidCount(field: String, allowed: ClosedRange<Int>)
    /// The basket already has `BasketContract.maxLines` lines.
    case basketFull
    /// The caller's basket has no line with the given item id.
    case itemNotFound
    /// The request's `expectedVersion` is not the basket's version.
    case versionConflict(expected: Int, current: Int)
    /// The product is priced in another currency than the lines already in the basket.
    case currencyMismatch(basket: String, product: String)
    /// The product's price is beyond what a basket total can hold.
    case priceOutOfRange(productID: Int)
    /// catalog-svc did not answer in time (down, unreachable or too slow).
    case upstreamUnavailable

    /// The reason sent for a currency mismatch; not one of API.md's, so defined here.
    static let currencyMismatchReason = "CURRENCY_MISMATCH"

    /// The error as the client sees it.
    var rpcError: RPCError {
        switch self {
        case .productNotFound(let productID):
            BasketReason.productNotFound.error("No product has the id \(productID).")
        case .alreadyInBasket:
            BasketReason.alreadyInBasket.error(BasketReason.alreadyInBasket.fixedMessage ?? "")
        case .invalidCount(let field, let allowed):
            BasketReason.invalidCount.error(
                "\(field) must be \(allowed.lowerBound)...\(allowed.upperBound).",
                details: Self.violation(field, "must be \(allowed.lowerBound)...\(allowed.upperBound)"))
        case .basketFull:
            BasketReason.basketFull.error(
                "The basket already holds \(BasketContract.maxLines) products; remove one to add another.")
        case .itemNotFound:
            BasketReason.itemNotFound.error("The basket has no item with this id.")
        case .versionConflict(let expected, let current):
            BasketReason.versionConflict.error(
                "The basket is at version \(current), not \(expected); read it again and retry.",
                details: .object(["currentVersion": .number(Double(current))]))
        case .currencyMismatch(let basket, let product):
            RPCError(
                code: .failedPrecondition, reason: Self.currencyMismatchReason,
                message: "The product is priced in \(product) but the basket is in \(basket); one basket holds one currency.")
        case .priceOutOfRange(let productID):
            RPCError(
                code: .failedPrecondition, message: "The price of product \(productID) is too large for a basket.")
        case .upstreamUnavailable:
            GatewayReason.upstreamUnavailable.error("The catalog is unavailable; try again shortly.")
        }
    }

    /// A `fieldViolations` detail naming one field.
    private static func violation(_ field: String, _ description: String) -> JSONValue {
        .object(["fieldViolations": .array([.object(["field": .string(field), "description": .string(description)])])])
    }
}
