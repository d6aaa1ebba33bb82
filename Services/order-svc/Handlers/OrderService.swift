import Contracts
import Crypto
import Foundation
import Logging
import RPC
import ServiceKit
import Synchronization

/// The handlers of `shop.order.v1.OrderService` (API.md §6): reading and cancelling orders
/// here; PlaceOrder in `OrderService+PlaceOrder.swift`; the recovery pass in
/// `OrderService+Recovery.swift`. Its dependencies are stored properties.
struct OrderService: Sendable {
    /// The database.
    let store: OrderStore
    /// Moves the money.
    let payments: any PaymentProvider
    /// basket-svc.
    let basket: RPCClient
    /// catalog-svc.
    let catalog: RPCClient
    /// The key of catalog-svc's stock methods.
    let internalKey: String
    /// Keys the request hash of idempotency records (so stored hashes reveal no card data).
    let requestKey: SymmetricKey
    /// Signs and checks ListOrders page tokens.
    let pageTokens: PageTokens
    /// Orders a call in this process is working on; recovery leaves them alone.
    let inFlight: InFlightOrders
    /// The service's logger, for the recovery pass.
    let logger: Logger
    /// Placements and refunds counted.
    let metrics: OrderMetrics
    /// Spaces out the recovery passes retries start (``nudgeRecovery()``).
    let recoveryNudges = RecoveryNudges()

    /// How long an upstream call may take when the caller set no deadline.
    static let defaultUpstreamTimeout: Duration = .seconds(10)

    /// `GetOrder`: another user's order is `ORDER_NOT_FOUND` too.
    func getOrder(_ request: GetOrderRequest, context: ServerContext) async throws -> Order {
        let user = try context.requireUser()
        guard let record = try await store.order(id: request.id, userID: user.id), record.isVisible else {
            throw OrderError.orderNotFound(id: request.id)
        }
        return record.order
    }

    /// Where a page of orders ends.
    struct OrderCursor: Codable, Sendable {
        /// The sequence number of the last order on the page.
        var before: Int64
    }

    /// `ListOrders`: newest first.
    func listOrders(_ request: ListOrdersRequest, context: ServerContext) async throws -> ListOrdersResponse {
        let user = try context.requireUser()
        try request.validatePageSize()
        let scope = "orders|\(user.id)"
        var before: Int64?
        if !request.effectivePageToken.isEmpty {
            guard let cursor = pageTokens.decode(request.effectivePageToken, as: OrderCursor.self, scope: scope) else {
                throw OrderError.invalidPageToken
            }
            before = cursor.before
        }
        let (orders, next) = try await store.orders(userID: user.id, before: before, limit: request.effectivePageSize)
        return ListOrdersResponse(
            orders: orders, nextPageToken: next.map { pageTokens.encode(OrderCursor(before: $0), scope: scope) } ?? "")
    }

    /// `CancelOrder`: a `PAID` order is refunded, its stock released, and it becomes `CANCELLED`.
    func cancelOrder(_ request: CancelOrderRequest, context: ServerContext) async throws -> Order {
        let user = try context.requireUser()
        guard let record = try await store.order(id: request.id, userID: user.id), record.isVisible else {
            throw OrderError.orderNotFound(id: request.id)
        }
        try Self.checkCancellable(record)
        guard inFlight.claim(record.order.id) else {
            throw OrderError.orderBeingChanged
        }
        defer { inFlight.release(record.order.id) }
        // Read again under the claim: another cancel may have finished it since the read above.
        guard let current = try await store.order(id: record.order.id) else { throw OrderError.orderNotFound(id: request.id) }
        try Self.checkCancellable(current)
        try await store.advance(orderID: record.order.id, to: "cancelling")
        try await finishCancelling(record.order.id, options: upstreamOptions(context, withInternalKey: true))
        guard let cancelled = try await store.order(id: record.order.id) else { throw OrderError.orderNotFound(id: request.id) }
        context.logger.info("order cancelled", metadata: ["order": "\(record.order.id)"])
        return cancelled.order
    }

    /// `FAILED_PRECONDITION`/`ORDER_NOT_CANCELLABLE` unless `record` is a paid order (or one
    /// whose cancelling a failure interrupted).
    private static func checkCancellable(_ record: OrderRecord) throws {
        guard record.order.status == .paid, record.step == "done" || record.step == "cancelling" else {
            throw OrderError.orderNotCancellable(status: record.order.status)
        }
    }

    /// Refunds, releases the stock, and marks the order `CANCELLED` (each step idempotent).
    func finishCancelling(_ orderID: String, options: CallOptions) async throws {
        try await payments.refund(orderID: orderID)
        try await releaseStock(orderID, options: options)
        try await store.advance(orderID: orderID, to: "done", status: .cancelled)
        metrics.countRefund()
    }

    // MARK: Upstreams

    /// Options for a call made on behalf of `context`: its request id, token and remaining
    /// deadline (10 s when it has none), plus the internal key for stock methods.
    func upstreamOptions(_ context: ServerContext, withInternalKey: Bool = false) -> CallOptions {
        let extra: Metadata = withInternalKey ? [MetadataKey.apiKey: internalKey] : Metadata()
        var options = CallOptions.propagating(from: context, extra: extra)
        if options.deadline == nil { options.deadline = .now + Self.defaultUpstreamTimeout }
        return options
    }

    /// Options for a call of the recovery pass: the internal key, 10 s.
    var recoveryOptions: CallOptions {
        CallOptions(metadata: [MetadataKey.apiKey: internalKey], timeout: Self.defaultUpstreamTimeout)
    }

    /// Gives back the stock reserved for `orderID` (idempotent at catalog-svc).
    func releaseStock(_ orderID: String, options: CallOptions) async throws {
        _ = try await catalog.unary(CatalogContract.releaseStock, ReleaseStockRequest(reservationId: orderID), options: options)
    }
}

extension OrderRecord {
    /// Whether the user may see the order: a placement still between pricing and charging
    /// is not an order yet.
    var isVisible: Bool { step != "priced" && step != "reserved" }
}

/// The orders calls in this process are working on, so that the periodic recovery pass never
/// touches one mid-flight. Thread-safe: a `Mutex`-guarded set.
final class InFlightOrders: Sendable {
    private let ids = Mutex<Set<String>>([])

    /// Marks `orderID` in flight; false when it already was.
    func claim(_ orderID: String) -> Bool { ids.withLock { $0.insert(orderID).inserted } }

    /// Unmarks `orderID`.
    func release(_ orderID: String) { _ = ids.withLock { $0.remove(orderID) } }

    /// Whether `orderID` is in flight.
    func contains(_ orderID: String) -> Bool { ids.withLock { $0.contains(orderID) } }
}
