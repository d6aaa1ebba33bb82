import Contracts
import Foundation
import RPC

/// The signed-in user's orders: placing one from the basket (paid by card, never charged
/// twice for one ``place(address:payment:)``), reading and cancelling them. Every method
/// throws `.unauthenticated` (`.missingToken`) when signed out.
///
/// Thread-safe.
public struct StorefrontOrders: Sendable {
    let calls: StorefrontCalls

    /// Orders everything in the signed-in user's basket, shipped to `address` and paid with
    /// `payment`; the basket is emptied. The call carries one `idempotency-key` of its own,
    /// the same on every retry of it — after a lost connection, a refreshed access token, or
    /// an answer that the same order is still being placed — so the server places and charges
    /// once, and a retry answers the order the first attempt placed. A second `place` is a
    /// second order.
    ///
    /// - Throws: `.emptyBasket`, `.outOfStock(productID:available:)` (every short product in
    ///   ``StorefrontError/stockShortages``), `.paymentDeclined` (the order stays as
    ///   `.paymentFailed`, the basket as it was), `.invalidCard`, `.invalidArgument` for a bad
    ///   address (``StorefrontError/fieldViolations`` names the field), `.requestInProgress`
    ///   when the first attempt is still running after every wait.
    public func place(address: Address, payment: CardDetails) async throws(StorefrontError) -> Order {
        var metadata = Metadata()
        metadata.add(MetadataKey.idempotencyKey, UUID().uuidString)  // one per place: every retry below reuses it
        let request = PlaceOrderRequest(shippingAddress: address, payment: payment)
        var attempt = 1
        while true {
            do {
                return try await calls.signedIn(Self.placeOrder, request, metadata: metadata)
            } catch where error.reason == .requestInProgress && attempt < calls.rpc.retry.maxAttempts {
                try await Self.sleep(for: calls.rpc.retry.delay(beforeRetry: attempt))
                attempt += 1
            }
        }
    }

    /// The signed-in user's orders, newest first, `pageSize` (at most 100) a page.
    ///
    /// Iterating throws `.invalidPageToken`.
    public func orders(pageSize: Int = 20) -> OrderPages {
        OrderPages { [calls] pageToken throws(StorefrontError) in
            let answer = try await calls.signedIn(OrderContract.listOrders, ListOrdersRequest(pageSize: pageSize, pageToken: pageToken))
            return (answer.orders, answer.nextPageToken)
        }
    }

    /// The signed-in user's order `id`.
    ///
    /// - Throws: `.orderNotFound`, also for another user's order.
    public func order(id: String) async throws(StorefrontError) -> Order {
        try await calls.signedIn(OrderContract.getOrder, GetOrderRequest(id: id))
    }

    /// Cancels the signed-in user's order `id` (its stock goes back); returns it, `.cancelled`.
    ///
    /// - Throws: `.orderNotCancellable` unless it is `.paid`, `.orderNotFound`.
    @discardableResult
    public func cancel(id: String) async throws(StorefrontError) -> Order {
        try await calls.signedIn(OrderContract.cancelOrder, CancelOrderRequest(id: id))
    }

    /// `PlaceOrder` as this surface sends it: always with an idempotency key, with which a
    /// repeat returns the first answer — so the client retries it on `UNAVAILABLE` before any
    /// answer, as it retries the methods that are idempotent by themselves.
    static let placeOrder = MethodDescriptor<PlaceOrderRequest, Order>(
        service: OrderContract.service, method: OrderContract.placeOrder.info.method, kind: .unary,
        auth: OrderContract.placeOrder.info.auth, idempotent: true)

    /// Waits `delay`; a cancelled task stops waiting with `.cancelled`.
    private static func sleep(for delay: Duration) async throws(StorefrontError) {
        do { try await Task.sleep(for: delay) } catch { throw StorefrontError.converting(error) }
    }
}
