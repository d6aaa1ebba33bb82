import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport

/// The calls the tests make on the stack's services, typed as `Contracts` declares them.
extension OrderStack {
    /// Options with only a timeout.
    static func plain(timeout: Duration = .seconds(15)) -> CallOptions { CallOptions(timeout: timeout) }

    // MARK: catalog-svc

    /// The product `id`, as `GetProduct` answers it now.
    func product(_ id: Int) async throws -> Product {
        try await client(.catalog).unary(CatalogContract.getProduct, GetProductRequest(id: id), options: Self.plain()).product
    }

    /// The units of product `id` in stock now.
    func stock(of id: Int) async throws -> Int { try await product(id).stock }

    /// Replaces product `id` with `change` applied (admin `UpsertProduct`); returns the result.
    @discardableResult
    func updateProduct(_ id: Int, _ change: (inout Product) -> Void) async throws -> Product {
        var product = try await product(id)
        change(&product)
        let options = CallOptions(metadata: [MetadataKey.apiKey: adminKey], timeout: .seconds(15))
        return try await client(.catalog).unary(
            CatalogContract.upsertProduct, UpsertProductRequest(product: product), options: options
        ).product
    }

    /// Takes stock for `reservationID` as order-svc does (internal `ReserveStock`).
    func reserveStock(_ reservationID: String, _ items: [StockReservationItem]) async throws {
        let options = CallOptions(metadata: [MetadataKey.apiKey: internalKey], timeout: .seconds(15))
        _ = try await client(.catalog).unary(
            CatalogContract.reserveStock, ReserveStockRequest(reservationId: reservationID, items: items), options: options)
    }

    // MARK: basket-svc

    /// Adds `count` units of product `productID` to the basket of `shopper`.
    @discardableResult
    func addItem(_ productID: Int, count: Int = 1, for shopper: Shopper) async throws -> Basket {
        try await client(.basket).unary(
            BasketContract.addItem, AddItemRequest(productId: productID, count: count), options: shopper.options())
    }

    /// The basket of `shopper`.
    func basket(of shopper: Shopper) async throws -> Basket {
        try await client(.basket).unary(BasketContract.getBasket, Empty(), options: shopper.options())
    }

    // MARK: order-svc

    /// `PlaceOrder` as `shopper` with `idempotency-key: key` (no header when `key` is nil),
    /// through `replica` (a client of one order-svc) or else the stack's order-svc.
    @discardableResult
    func placeOrder(
        _ request: PlaceOrderRequest = .standard, key: String? = UUID().uuidString, as shopper: Shopper,
        via replica: RPCClient? = nil
    ) async throws -> Order {
        var options = shopper.options(timeout: .seconds(30))
        if let key { options.metadata.set(MetadataKey.idempotencyKey, key) }
        return try await (replica ?? client(.order)).unary(OrderContract.placeOrder, request, options: options)
    }

    /// `GetOrder` as `shopper`.
    func order(_ id: String, as shopper: Shopper) async throws -> Order {
        try await client(.order).unary(OrderContract.getOrder, GetOrderRequest(id: id), options: shopper.options())
    }

    /// One page of `ListOrders` as `shopper`.
    func listOrders(pageSize: Int? = nil, pageToken: String? = nil, as shopper: Shopper) async throws -> ListOrdersResponse {
        try await client(.order).unary(
            OrderContract.listOrders, ListOrdersRequest(pageSize: pageSize, pageToken: pageToken),
            options: shopper.options())
    }

    /// `CancelOrder` as `shopper`.
    func cancelOrder(_ id: String, as shopper: Shopper) async throws -> Order {
        try await client(.order).unary(OrderContract.cancelOrder, CancelOrderRequest(id: id), options: shopper.options())
    }
}
