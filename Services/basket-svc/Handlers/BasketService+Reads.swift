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
    func watchBasket(_ request: Empty, writer: ResponseWriter<Basket>, context: ServerContext) async throws {
        let caller = try context.requireUser()
        // Listen before reading, so a change committed between the two is not missed; the hub
        // drops whichever of the read and the change is older.
        let snapshots = hub.watch(userID: caller.id)
        hub.publish(try await store.basket(userID: caller.id).message, userID: caller.id)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await basket in snapshots { try await writer.write(basket) }
            }
            group.addTask { try await endWhenRevoked(sessionID: caller.sessionID) }
            // Whichever ends first ends the call: the stream (cancelled, or the hub closed), or
            // the revocation check by throwing.
            try await group.next()
            group.cancelAll()
        }
        try Task.checkCancellation()
        if hub.isClosed {
            throw RPCError(code: .unavailable, message: "basket-svc is shutting down; watch again.")
        }
    }

    /// Returns when cancelled; throws `SESSION_REVOKED` once `sessionID` is reported revoked.
    private func endWhenRevoked(sessionID: String) async throws {
        while !Task.isCancelled {
            try? await Task.sleep(for: revocationCheckInterval)
            if try await revocations.isRevoked(sessionID: sessionID) {
                throw AuthReason.sessionRevoked.error("The session has been revoked; sign in again.")
            }
        }
    }
}
