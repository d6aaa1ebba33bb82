import Contracts
import RPC
import JSON

/// Why order-svc refuses a call, each case knowing the gRPC code, reason and message it is
/// sent with (API.md §5, README "Choices"). Field checks build their errors through
/// `invalidField` (``AddressRules``, ``CardRules``).
enum OrderError: Error, Sendable, Hashable, RPCErrorConvertible {
    /// `PlaceOrder` without an idempotency key of 1 to 255 characters.
    case idempotencyKeyRequired
    /// An idempotency key already used for a different order request.
    case idempotencyKeyReused
    /// The first `PlaceOrder` with this idempotency key is still running.
    case firstRequestInProgress
    /// Another call is changing the order (a cancel in flight).
    case orderBeingChanged
    /// The caller's basket has no lines.
    case emptyBasket
    /// The basket's products are priced in more than one currency.
    case mixedCurrencies
    /// The order's total does not fit an `Int` of minor units.
    case totalTooLarge
    /// The catalog's price of `productID`, `amount` minor units, cannot be ordered (not a unit
    /// price, or a line total that overflows).
    case unorderablePrice(productID: Int, amount: Int)
    /// The catalog no longer sells `productIDs`; `shortages` are the basket's lines of them.
    case noLongerSold(productIDs: [Int], shortages: [StockShortage])
    /// The catalog has less left of the products in `shortages` than the order wants.
    case outOfStock(shortages: [StockShortage])
    /// The catalog refused the reservation as out of stock without listing shortages: its
    /// `message` and `details` are passed on as they are.
    case outOfStockAsCatalogAnswered(message: String, details: JSONValue?)
    /// The payment provider declined the card, for `reason`.
    case paymentDeclined(reason: String)
    /// A page token that is not ours or belongs to another listing.
    case invalidPageToken
    /// Only a paid order can be cancelled; this one has `status`.
    case orderNotCancellable(status: OrderStatus)
    /// The caller has no order `id`; the message quotes at most ``ClientInput/maxCharacters`` of it.
    case orderNotFound(id: String)
    /// `service` could not be reached.
    case upstreamUnavailable(service: String)

    /// The error as the client sees it.
    var rpcError: RPCError {
        switch self {
        case .idempotencyKeyRequired:
            OrderReason.idempotencyKeyRequired.error("Send an idempotency-key header of 1 to 255 characters.")
        case .idempotencyKeyReused:
            OrderReason.idempotencyKeyReused.error("This idempotency-key was used for a different order request.")
        case .firstRequestInProgress:
            OrderReason.requestInProgress.error("The first request with this idempotency-key is still running.")
        case .orderBeingChanged:
            OrderReason.requestInProgress.error("The order is being changed; try again shortly.")
        case .emptyBasket:
            OrderReason.emptyBasket.error(OrderReason.emptyBasket.fixedMessage ?? "")
        case .mixedCurrencies:
            RPCError(code: .failedPrecondition, message: "The basket mixes currencies.")
        case .totalTooLarge:
            RPCError(code: .failedPrecondition, message: "The order's total is too large.")
        case .unorderablePrice(let productID, let amount):
            RPCError(
                code: .failedPrecondition, message: "Product \(productID) cannot be ordered at its price of \(amount) minor units.")
        case .noLongerSold(let productIDs, let shortages):
            OrderReason.outOfStock.error(
                "Product \(productIDs.map(String.init).joined(separator: ", ")) is no longer sold.",
                details: StockShortage.details(shortages))
        case .outOfStock(let shortages):
            OrderReason.outOfStock.error(StockShortage.message(shortages), details: StockShortage.details(shortages))
        case .outOfStockAsCatalogAnswered(let message, let details):
            OrderReason.outOfStock.error(message, details: details)
        case .paymentDeclined(let reason):
            OrderReason.paymentDeclined.error(reason)
        case .invalidPageToken:
            OrderReason.invalidPageToken.error("The page token is not valid; start from the first page.")
        case .orderNotCancellable(let status):
            OrderReason.orderNotCancellable.error("Only a paid order can be cancelled; this one is \(status.rawValue).")
        case .orderNotFound(let id):
            OrderReason.orderNotFound.error("No order \(ClientInput.quoted(id)) for this user.")
        case .upstreamUnavailable(let service):
            GatewayReason.upstreamUnavailable.error("\(service) is not available; try again shortly.")
        }
    }
}
