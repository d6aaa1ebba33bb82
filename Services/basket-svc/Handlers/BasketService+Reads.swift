import Contracts
import RPC
import ServiceKit

/// Reads: the basket now, and the basket as it changes. Neither asks the catalog.
extension BasketService {
    /// `GetBasket`: the caller's basket; version 0 and empty when it never changed.
    func getBasket(_ request: Empty, context: ServerContext) async throws -> Basket {
        let caller = try context.requireUser()
        return try await store.basket(userID: caller.id).message
    }

    /// `WatchBasket`: the current basket at once, then the latest basket after every change
    /// made by any session of the caller. A slow reader skips intermediate versions (the hub
    /// keeps only the newest unsent one). The call ends when the caller cancels it; with
    /// `SESSION_REVOKED` when the caller's session is revoked (as its access token stops
    /// working, API.md §3); or with `UNAVAILABLE` when the process shuts down, so that the
    /// client watches again elsewhere.
    ///
    /// The call's own task is all a watch runs on: the hub hands it each snapshot, encoded once
    /// for all the user's watchers, and one sweep over every watcher finds revoked sessions
    /// (``RevocationSweep``).
    func watchBasket(_ request: Empty, writer: ResponseWriter<Basket>, context: ServerContext) async throws {
        let caller = try context.requireUser()
        // Listen before reading, so a change committed between the two is not missed; the hub
        // drops whichever of the read and the change is older.
        let subscription = hub.watch(
            userID: caller.id, sessionID: caller.sessionID,
            revocations: RevocationSweep(checker: revocations, interval: revocationCheckInterval))
        defer { hub.remove(subscription) }
        hub.publish(try await store.basket(userID: caller.id).message, userID: caller.id)
        while let snapshot = await subscription.next() {
            if let encoded = snapshot.encoded {
                try await writer.write(encoded: encoded)
            } else {
                try await writer.write(snapshot.basket)
            }
        }
        try Task.checkCancellation()
        switch subscription.ending {
        case .revoked: throw AuthReason.sessionRevoked.error("The session has been revoked; sign in again.")
        case .closed, .cancelled, nil: throw RPCError(code: .unavailable, message: "basket-svc is shutting down; watch again.")
        }
    }
}
