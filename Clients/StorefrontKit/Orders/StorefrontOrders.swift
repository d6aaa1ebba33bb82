import Contracts
public import Foundation
import RPC

/// The signed-in user's orders: placing one from the basket (paid by card, charged at most
/// once per idempotency key of ``place(address:payment:idempotencyKey:)``), reading and
/// cancelling them. Every method throws `.unauthenticated` (`.missingToken`) when signed out.
///
/// Thread-safe.
public struct StorefrontOrders: Sendable {
    let calls: StorefrontCalls
    /// How long ``place(address:payment:idempotencyKey:)`` waits for an order that is still
    /// being placed.
    var inProgressWait = InProgressWait()

    /// Orders everything in the signed-in user's basket, shipped to `address` and paid with
    /// `payment`; the basket is emptied. The call carries `idempotencyKey`, the same on every
    /// retry of it — after a lost connection, a refreshed access token, or an answer that the
    /// same order is still being placed — so the server places and charges once, and a retry
    /// answers the order the first attempt placed.
    ///
    /// While the server answers that the order of this key is still being placed (a slow
    /// payment provider), `place` keeps asking with the same key for up to a minute, waiting
    /// longer each time, and answers the order once it is placed: giving up sooner would leave
    /// the user to tap again, a new order with a second charge. A cancelled task stops waiting.
    ///
    /// - Parameter idempotencyKey: what makes a repeat the same order. The default, a new UUID,
    ///   makes each call a new order. To retry an order whose outcome is unknown — the call
    ///   failed with `.deadlineExceeded`, `.unavailable` or `.cancelled`, so it may have been
    ///   placed — pass the key of the first call again: the answer is that order, charged once
    ///   (the server keeps a key's answer at least 24 hours). 1 to 255 characters.
    /// - Throws: `.idempotencyKeyReused` when the key came with a different request before,
    ///   `.emptyBasket`, `.outOfStock(productID:available:)` (every short product in
    ///   ``StorefrontError/stockShortages``), `.paymentDeclined` (the order stays as
    ///   `.paymentFailed`, the basket as it was), `.invalidCard`, `.invalidArgument` for a bad
    ///   address (``StorefrontError/fieldViolations`` names the field), `.requestInProgress`
    ///   when the first attempt is still running after a minute of waiting.
    public func place(
        address: Address, payment: CardDetails, idempotencyKey: String = UUID().uuidString
    ) async throws(StorefrontError) -> Order {
        var metadata = Metadata()
        metadata.add(MetadataKey.idempotencyKey, idempotencyKey)  // every retry below reuses it
        let request = PlaceOrderRequest(shippingAddress: address, payment: payment)
        let started = ContinuousClock.now
        var wait = 1
        while true {
            do {
                return try await calls.signedIn(Self.placeOrder, request, metadata: metadata)
            } catch where error.reason == .requestInProgress {
                let delay = inProgressWait.delay(beforeRetry: wait)
                guard ContinuousClock.now + delay <= started + inProgressWait.limit else { throw error }
                try await Self.sleep(for: delay)
                wait += 1
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

/// How long ``StorefrontOrders/place(address:payment:idempotencyKey:)`` keeps asking while the
/// server answers `REQUEST_IN_PROGRESS`: by time from the first attempt, not by a count of
/// attempts — a payment provider may take many seconds, and only the same key gets that
/// order's answer. The waits grow, so a long-running order costs few calls.
struct InProgressWait: Sendable {
    /// The longest `place` waits, from its first attempt, before it throws `.requestInProgress`.
    var limit: Duration = .seconds(60)
    /// The first wait.
    var firstDelay: Duration = .milliseconds(500)
    /// The longest single wait; each one doubles the one before up to this.
    var longestDelay: Duration = .seconds(2)

    /// The wait before asking again for the `retry`th time (1-based).
    func delay(beforeRetry retry: Int) -> Duration {
        .exponentialBackoff(initial: firstDelay, multiplier: 2, step: retry, cap: longestDelay)
    }
}
