import Contracts
import RPC
import JSON

/// Why catalog-svc refuses a call, each case knowing the gRPC code, reason and message it is
/// sent with (API.md §5). Field checks build their errors through `invalidField`, and product
/// checks through ``ProductValidation``.
enum CatalogError: Error, Sendable, Hashable, RPCErrorConvertible {
    /// The catalog has no product `id`.
    case productNotFound(id: Int)
    /// A stock reservation names products the catalog does not have, `ids` in the order asked.
    case unknownProducts(ids: [Int])
    /// A stock reservation wants more than is left of the products in `shortages`.
    case outOfStock(shortages: [StockShortage])
    /// A page token that is not ours or belongs to another listing.
    case invalidPageToken

    /// The error as the client sees it.
    var rpcError: RPCError {
        switch self {
        case .productNotFound(let id):
            CatalogReason.productNotFound.error("No product has id \(id).")
        case .unknownProducts(let ids):
            CatalogReason.productNotFound.error(
                "No product has id \(ids.map(String.init).joined(separator: ", ")).",
                details: .object(["productIds": .array(ids.map { .number(Double($0)) })]))
        case .outOfStock(let shortages):
            // The message says how many are left of each, for order-svc to pass on to the shopper.
            CatalogReason.outOfStock.error(StockShortage.message(shortages), details: StockShortage.details(shortages))
        case .invalidPageToken:
            CatalogReason.invalidPageToken.error("The page token is not valid for this request; start from the first page.")
        }
    }
}
