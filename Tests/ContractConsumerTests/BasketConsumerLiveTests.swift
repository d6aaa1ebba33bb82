import ContractTesting
import Contracts
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing
import JSON

/// basket-svc's real code (`BasketServer.build`, its `CatalogLink`, its `AuthServiceLink`)
/// against catalog-svc and auth-svc played from its contracts.
@Suite("basket-svc as a consumer")
struct BasketConsumerLiveTests {
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

    @Test("AddItem and a raised count above catalog-svc's stock are OUT_OF_STOCK with the product and what is left")
    func addAboveStock() async throws {
        let lamp = CatalogInteractions.lamp
        try await MockProviders.run(
            consumer: "basket-svc",
            serving: ["catalog-svc": [try CatalogInteractions.getScarceProduct()], "auth-svc": [try AuthInteractions.getJwks()]]
        ) { mocks in
            let basket = try await ServiceUnderTest.basket(auth: mocks["auth-svc"], catalog: mocks["catalog-svc"])
            try await basket.use { client in
                let options = CallOptions(metadata: try TestAuthority.authorization(userID: Self.caller))
                let expected: JSONValue = .object([
                    "productId": .number(Double(lamp.id)), "available": .number(Double(lamp.stock)),
                ])
                let refused = await expectRPCError(BasketReason.outOfStock) {
                    try await client.unary(
                        BasketContract.addItem, AddItemRequest(productId: lamp.id, count: lamp.stock + 1), options: options)
                }
                #expect(refused?.details == expected)
                #expect(refused?.message == "Only \(lamp.stock) of product \(lamp.id) are left.")

                let added = try await client.unary(
                    BasketContract.addItem, AddItemRequest(productId: lamp.id, count: lamp.stock), options: options)
                let item = try #require(added.items.first)
                let raised = await expectRPCError(BasketReason.outOfStock) {
                    try await client.unary(
                        BasketContract.updateItemCount, UpdateItemCountRequest(itemId: item.id, count: lamp.stock + 1),
                        options: options)
                }
                #expect(raised?.details == expected)
            }
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
