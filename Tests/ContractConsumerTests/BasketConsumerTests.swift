import ContractTesting
import Contracts
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// basket-svc's real code (`BasketServer.build`, its `CatalogLink`, its `AuthServiceLink`)
/// against catalog-svc and auth-svc played from its contracts.
@Suite("basket-svc as a consumer")
struct BasketConsumerTests {
    /// The user the tests call as.
    static let caller = BasketInteractions.userID

    @Test("AddItem verifies the caller with auth-svc's keys and builds the line from catalog-svc's product")
    func addItem() async throws {
        try await MockProviders.run(
            consumer: "basket-svc",
            serving: ["catalog-svc": [try CatalogInteractions.getProduct()], "auth-svc": [try AuthInteractions.getJwks()]]
        ) { mocks in
            let basket = try await ServiceUnderTest.basket(auth: mocks["auth-svc"], catalog: mocks["catalog-svc"])
            let answer = try await basket.use { client in
                try await client.unary(
                    BasketContract.addItem, AddItemRequest(productId: CatalogInteractions.backpack.id, count: 2),
                    options: CallOptions(metadata: try TestAuthority.authorization(userID: Self.caller)))
            }
            #expect(answer.items.map(\.productTitle) == [CatalogInteractions.backpack.title])
            #expect(answer.items.first?.imageURL == CatalogInteractions.backpack.image)
            #expect(answer.total == CatalogInteractions.backpack.price.multiplied(by: 2))
        }
    }

    @Test("AddItem of a product catalog-svc does not have is PRODUCT_NOT_FOUND")
    func addMissingItem() async throws {
        try await MockProviders.run(
            consumer: "basket-svc",
            serving: ["catalog-svc": [CatalogInteractions.getMissingProduct()], "auth-svc": [try AuthInteractions.getJwks()]]
        ) { mocks in
            let basket = try await ServiceUnderTest.basket(auth: mocks["auth-svc"], catalog: mocks["catalog-svc"])
            try await basket.use { client in
                await expectRPCError(BasketReason.productNotFound) {
                    try await client.unary(
                        BasketContract.addItem, AddItemRequest(productId: CatalogInteractions.missingID),
                        options: CallOptions(metadata: try TestAuthority.authorization(userID: Self.caller)))
                }
            }
        }
    }
}
