import Contracts
import RPC
import ServiceKit
import JSON

/// Stock for orders (internal key, checked by `APIKeyInterceptor`).
extension CatalogService {
    /// `ReserveStock`: all lines or none; a reservation id seen before answers `{}` again.
    /// `OUT_OF_STOCK` lists the short products in `productIds` and, with what is left and
    /// what was wanted of each, in `shortages` (``StockShortage``).
    func reserveStock(_ request: ReserveStockRequest, context: ServerContext) async throws -> Empty {
        guard (1...255).contains(request.reservationId.count) else {
            throw CatalogReason.invalidReservation.invalidField("reservationId", "must be 1 to 255 characters")
        }
        guard !request.items.isEmpty else { throw CatalogReason.invalidReservation.invalidField("items", "must not be empty") }
        var counts: [Int: Int] = [:]
        for (index, item) in request.items.enumerated() {
            guard (1...ProductRules.maximumReservationCount).contains(item.count) else {
                throw CatalogReason.invalidReservation.invalidField(
                    "items[\(index)].count", "must be 1 to \(ProductRules.maximumReservationCount)")
            }
            // At most 1e6 × the number of lines: no overflow, whatever the request repeats.
            counts[item.productId, default: 0] += item.count
        }
        switch try await store.reserve(reservationID: request.reservationId, counts: counts) {
        case .reserved:
            return Empty()
        case .unknownProducts(let ids):
            throw CatalogError.unknownProducts(ids: ids)
        case .outOfStock(let shortages):
            throw CatalogError.outOfStock(shortages: shortages)
        }
    }

    /// `ReleaseStock` (idempotent).
    func releaseStock(_ request: ReleaseStockRequest, context: ServerContext) async throws -> Empty {
        guard (1...255).contains(request.reservationId.count) else {
            throw CatalogReason.invalidReservation.invalidField("reservationId", "must be 1 to 255 characters")
        }
        if try await store.release(reservationID: request.reservationId) { metrics.countReservationReleased() }
        return Empty()
    }
}
