import Contracts
import RPC
import JSON

/// Why basket-svc refuses a call, each case knowing the gRPC code and reason it is sent with
/// (API.md §5, README "Choices where API.md is silent").
enum BasketError: Error, Sendable, Hashable, RPCErrorConvertible {
    /// The catalog has no product `productID`.
    case productNotFound(productID: Int)
    /// The product `productID` already has the line `itemID`.
    case alreadyInBasket(productID: Int, itemID: String)
    /// `count` is outside `allowed`.
    case invalidCount(allowed: ClosedRange<Int>)
    /// The count asked for is more than the `available` units of `productID` in stock.
    case outOfStock(productID: Int, available: Int)
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
        case .alreadyInBasket(let productID, let itemID):
            // API.md fixes the message; the details name the line, so a client can offer to change it.
            BasketReason.alreadyInBasket.error(
                BasketReason.alreadyInBasket.fixedMessage ?? "",
                details: .object(["productId": .number(Double(productID)), "itemId": .string(itemID)]))
        case .invalidCount(let allowed):
            BasketReason.invalidCount.invalidField(
                "count", "must be \(allowed.lowerBound) to \(allowed.upperBound)", subject: "The count")
        case .outOfStock(let productID, let available):
            BasketReason.outOfStock.error(
                Self.stockMessage(productID: productID, available: available),
                details: .object(["productId": .number(Double(productID)), "available": .number(Double(available))]))
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

    /// How many units of `productID` are left: "Only 7 of product 25 are left.", "Product 25 is sold out."
    static func stockMessage(productID: Int, available: Int) -> String {
        switch available {
        case ...0: "Product \(productID) is sold out."
        case 1: "Only 1 of product \(productID) is left."
        default: "Only \(available) of product \(productID) are left."
        }
    }
}
