import Contracts
internal import Foundation
import RPC
import ServiceKit

/// The handlers of `shop.basket.v1.BasketService` (API.md §5). Stateless itself: the baskets
/// live in the store, the open `WatchBasket` streams in the hub.
///
/// The caller is always the access token's subject: no request names a user, so no call can
/// read or change another user's basket. Reads (`GetBasket`, `WatchBasket`) serve the stored
/// lines and never ask the catalog, so they keep working while catalog-svc is down.
///
/// The methods are in `BasketService+Reads.swift` and `BasketService+Changes.swift`, registered
/// on the router in `BasketService+Routes.swift`.
struct BasketService: Sendable {
    /// The database.
    let store: BasketStore
    /// Where titles, prices and images come from.
    let catalog: CatalogLink
    /// The open `WatchBasket` streams, told of every committed change.
    let hub: BasketHub
    /// The sessions auth-svc reported revoked: an open watch of one ends.
    let revocations: any RevocationChecker
    /// How often an open watch checks whether its session was revoked.
    var revocationCheckInterval: Duration = .seconds(5)

    // MARK: Helpers shared by the handlers

    /// `basket` as the answer, after handing it to the watchers of `userID`. A basket that did
    /// not change (same version) reaches no watcher twice: the hub only moves forward.
    func published(_ basket: BasketRecord, userID: String) -> Basket {
        let message = basket.message
        hub.publish(message, userID: userID)
        return message
    }

    /// The stored form of an `itemId`: a UUID, lower-cased. `INVALID_ARGUMENT` naming `itemId`
    /// when it is empty or not a UUID, as no item id can be.
    static func itemID(_ text: String) throws(RPCError) -> String {
        let problem = text.isEmpty ? "must not be empty" : "must be the id of a basket item (a UUID)"
        guard let uuid = UUID(uuidString: text) else {
            throw BasketReason.invalidItemID.invalidField("itemId", problem, subject: "The item id")
        }
        return uuid.uuidString.lowercased()
    }

    /// `expectedVersion` as given; `INVALID_ARGUMENT` when negative, as no version is.
    static func expectedVersion(_ version: Int?) throws(RPCError) -> Int? {
        if let version, version < 0 {
            throw BasketReason.invalidVersion.invalidField(
                "expectedVersion", "must not be negative", subject: "The expected version")
        }
        return version
    }

    /// Throws `INVALID_COUNT` naming `count` unless it lies in `allowed`.
    static func checkCount(_ count: Int, allowed: ClosedRange<Int>) throws(BasketError) {
        guard allowed.contains(count) else { throw BasketError.invalidCount(allowed: allowed) }
    }
}
