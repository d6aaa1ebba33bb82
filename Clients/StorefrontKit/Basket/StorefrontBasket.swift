import Contracts
import Foundation
import RPC

/// The signed-in user's basket, as a Firebase app keeps it in a Firestore document: read it,
/// change it, and listen to it — ``changes`` starts with the basket now and then delivers every
/// change, from this device or any other of the user's, across network loss and server
/// restarts.
///
/// Every method needs a signed-in user (else `.unauthenticated`/`.missingToken`) and answers
/// with the basket after the call. Lines are named by their `id` (a UUID string); a basket's
/// `version` goes up by one on every change, and the methods taking an `expectedVersion`
/// refuse to change a basket that has moved on (`.versionConflict`).
///
/// Thread-safe.
public struct StorefrontBasket: Sendable {
    let calls: StorefrontCalls
    /// What keeps ``changes`` going.
    let watch: BasketWatch

    /// The basket surface over `calls`, whose ``changes`` end when `broadcast` says the user
    /// signed out, waiting `backoff`'s delays (with `sleep`) between streams.
    init(
        calls: StorefrontCalls, broadcast: AuthStateBroadcast, backoff: ReconnectBackoff = .standard,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.calls = calls
        watch = BasketWatch(calls: calls, broadcast: broadcast, backoff: backoff, sleep: sleep)
    }

    /// The basket now.
    public func current() async throws(StorefrontError) -> Basket {
        try await calls.signedIn(BasketContract.getBasket, Empty())
    }

    /// Adds `count` of a product as a new line.
    ///
    /// - Throws: `.alreadyInBasket` (change the line's count instead), `.productNotFound`,
    ///   `.invalidCount` (outside 1...10), `.basketFull` (100 lines),
    ///   `.outOfStock(productID:available:)` when the count exceeds the stock.
    @discardableResult
    public func add(productID: Int, count: Int = 1) async throws(StorefrontError) -> Basket {
        try await calls.signedIn(BasketContract.addItem, AddItemRequest(productId: productID, count: count))
    }

    /// Sets a line's count; 0 removes the line. With `expectedVersion`, only if the basket is
    /// still at that version.
    ///
    /// - Throws: `.invalidCount` (outside 0...10), `.itemNotFound`, `.versionConflict`,
    ///   `.outOfStock(productID:available:)` when raising it past the stock.
    @discardableResult
    public func setCount(itemID: String, count: Int, expectedVersion: Int? = nil) async throws(StorefrontError) -> Basket {
        try await calls.signedIn(
            BasketContract.updateItemCount, UpdateItemCountRequest(itemId: itemID, count: count, expectedVersion: expectedVersion))
    }

    /// Removes a line.
    ///
    /// - Throws: `.itemNotFound`.
    @discardableResult
    public func remove(itemID: String) async throws(StorefrontError) -> Basket {
        try await calls.signedIn(BasketContract.removeItem, RemoveItemRequest(itemId: itemID))
    }

    /// Removes every line. With `expectedVersion`, only if the basket is still at that version.
    ///
    /// - Throws: `.versionConflict`.
    @discardableResult
    public func clear(expectedVersion: Int? = nil) async throws(StorefrontError) -> Basket {
        try await calls.signedIn(BasketContract.clearBasket, ClearBasketRequest(expectedVersion: expectedVersion))
    }

    /// The basket now, then the basket after every change — Firestore's snapshot listener:
    ///
    /// ```swift
    /// for try await basket in client.basket.changes { show(basket) }
    /// ```
    ///
    /// It keeps going across network loss and restarts of the gateway or basket-svc: a stream
    /// that ends is opened again with backoff (capped, jittered), and the first basket of the
    /// new stream is delivered unless nothing changed meanwhile — no version is delivered twice
    /// in a row. An access token that expires on the way is refreshed. A consumer slower than
    /// the changes gets the latest basket, never a backlog. Cancelling the consuming task (or
    /// dropping the iterator) ends the server call.
    ///
    /// - Throws: (ending the sequence) only what retrying cannot fix: `.unauthenticated` when
    ///   the user signs out (`.missingToken`) or the session ended on the server (the refresh
    ///   refused: the user is signed out here too), `.permissionDenied`.
    public var changes: AsyncThrowingStream<Basket, any Error> { watch.stream() }
}
