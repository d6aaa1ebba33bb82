import ContractTesting
import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// order-svc's real PlaceOrder (`OrderServer.build`, `OrderService+PlaceOrder`) against
/// basket-svc, catalog-svc and auth-svc played from its contracts: each path through the
/// order makes exactly the upstream calls its interactions describe.
@Suite("order-svc as a consumer")
struct OrderConsumerLiveTests {
    /// A PlaceOrder request paid with `cardNumber`.
    static func order(paying cardNumber: String = "4242424242424242") -> PlaceOrderRequest {
        PlaceOrderRequest(
            shippingAddress: Address(
                name: "Ada Lovelace", line1: "12 Analytical Row", city: "London", postalCode: "N1 9GU", country: "GB"),
            payment: CardDetails(cardNumber: cardNumber, expMonth: 12, expYear: 2030, cvc: "123"))
    }

    /// The caller's token and a fresh idempotency key.
    static func metadata() throws -> Metadata {
        var metadata = try TestAuthority.authorization(userID: BasketInteractions.userID)
        metadata.set(MetadataKey.idempotencyKey, UUID().uuidString)
        return metadata
    }

    /// Runs PlaceOrder on an order-svc whose upstreams serve `basket` and `catalog`.
    static func placeOrder(
        paying cardNumber: String = "4242424242424242", basket: [InteractionSpec], catalog: [InteractionSpec]
    ) async throws -> Result<Order, any Error> {
        try await MockProviders.run(
            consumer: "order-svc",
            serving: ["auth-svc": [try AuthInteractions.getJwks()], "basket-svc": basket, "catalog-svc": catalog]
        ) { mocks in
            let service = try await ServiceUnderTest.order(
                auth: mocks["auth-svc"], basket: mocks["basket-svc"], catalog: mocks["catalog-svc"])
            return try await service.use { client in
                do {
                    return .success(
                        try await client.unary(
                            OrderContract.placeOrder, order(paying: cardNumber), options: CallOptions(metadata: try metadata())))
                } catch {
                    return .failure(error)
                }
            }
        }
    }

    @Test("a paid order reads the basket, re-prices it, reserves the stock and clears the basket")
    func paidOrder() async throws {
        let result = try await Self.placeOrder(
            basket: [try BasketInteractions.getBasket(), try BasketInteractions.clearBasket()],
            catalog: [try CatalogInteractions.batchGetProducts(), try CatalogInteractions.reserveStock()])
        let order = try result.get()
        #expect(order.status == .paid)
        #expect(order.items.map(\.productId) == [CatalogInteractions.backpack.id, CatalogInteractions.lamp.id])
        #expect(order.total == BasketInteractions.twoLines.total)
    }

    @Test("a declined card gives the reserved stock back")
    func declinedOrder() async throws {
        let result = try await Self.placeOrder(
            paying: "4000000000000002", basket: [try BasketInteractions.getBasket()],
            catalog: [
                try CatalogInteractions.batchGetProducts(), try CatalogInteractions.reserveStock(),
                try CatalogInteractions.releaseStock(),
            ])
        await expectRPCError(OrderReason.paymentDeclined) { try result.get() }
    }

    @Test("stock that does not cover the basket is OUT_OF_STOCK")
    func outOfStock() async throws {
        let result = try await Self.placeOrder(
            basket: [try BasketInteractions.getBasket()],
            catalog: [try CatalogInteractions.batchGetProducts(), try CatalogInteractions.reserveStockOutOfStock()])
        await expectRPCError(OrderReason.outOfStock) { try result.get() }
    }

    @Test("an empty basket is EMPTY_BASKET, without asking the catalog")
    func emptyBasket() async throws {
        let result = try await Self.placeOrder(basket: [try BasketInteractions.getEmptyBasket()], catalog: [])
        await expectRPCError(OrderReason.emptyBasket) { try result.get() }
    }
}
