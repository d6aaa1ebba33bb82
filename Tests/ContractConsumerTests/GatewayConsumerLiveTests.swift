import ContractTesting
import Contracts
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// The gateway's real code (`GatewayServer.build`: route table, proxy, StorefrontService,
/// interceptors) against every service played from its contracts.
@Suite("gateway as a consumer")
struct GatewayConsumerLiveTests {
    /// The user the tests call as.
    static let caller = GatewayInteractions.userID

    /// The caller's token.
    static func signedIn() throws -> CallOptions { CallOptions(metadata: try TestAuthority.authorization(userID: caller)) }

    /// Runs `body` against a gateway whose upstreams serve `interactions`, by provider name.
    static func withGateway<Result>(
        serving interactions: [String: [InteractionSpec]], _ body: (RPCClient) async throws -> Result
    ) async throws -> Result {
        try await MockProviders.run(consumer: "gateway", serving: interactions) { mocks in
            let gateway = try await ServiceUnderTest.gateway(
                auth: mocks["auth-svc"], catalog: mocks["catalog-svc"], basket: mocks["basket-svc"], order: mocks["order-svc"])
            return try await gateway.use(body)
        }
    }

    @Test("a signed-in product page is composed from the product, the caller's favorites and basket")
    func productPage() async throws {
        let page = try await Self.withGateway(serving: [
            "auth-svc": [try AuthInteractions.getJwks()],
            "catalog-svc": [try GatewayInteractions.getProductForPage(), try GatewayInteractions.listFavorites()],
            "basket-svc": [try GatewayInteractions.getBasketForPage()],
        ]) { client in
            try await client.unary(
                StorefrontContract.getProductPage, GetProductPageRequest(productId: CatalogInteractions.backpack.id),
                options: try Self.signedIn())
        }
        #expect(page.product == CatalogInteractions.backpack)
        #expect(page.isFavorite)
        #expect(page.basketItem?.count == 2)
    }

    @Test("the anonymous home screen is composed from the categories and the first page of products")
    func home() async throws {
        let home = try await Self.withGateway(serving: [
            "catalog-svc": [try GatewayInteractions.listCategories(), try GatewayInteractions.listProducts()]
        ]) { client in
            try await client.unary(StorefrontContract.getHome, GetHomeRequest())
        }
        #expect(home.categories.map(\.name) == ["bags"])
        #expect(home.products.map(\.id) == [CatalogInteractions.backpack.id])
        #expect(home.basketItemCount == 0)
    }

    @Test("auth-svc's methods pass through unchanged, a user method after the token is verified here")
    func routedAuth() async throws {
        try await Self.withGateway(serving: [
            "auth-svc": [try AuthInteractions.getJwks(), try GatewayInteractions.signIn(), try GatewayInteractions.getCurrentUser()]
        ]) { client in
            let session = try await client.unary(
                AuthContract.signIn, SignInRequest(email: GatewayInteractions.email, password: GatewayInteractions.password))
            #expect(session.user.email == GatewayInteractions.email)
            let current = try await client.unary(AuthContract.getCurrentUser, Empty(), options: try Self.signedIn())
            #expect(current.user.email == GatewayInteractions.email)
        }
    }

    @Test("an admin call reaches catalog-svc with the caller's x-api-key")
    func routedAdmin() async throws {
        try await Self.withGateway(serving: ["catalog-svc": [try GatewayInteractions.upsertProduct()]]) { client in
            let answer = try await client.unary(
                CatalogContract.upsertProduct, UpsertProductRequest(product: GatewayInteractions.newProduct),
                options: CallOptions(metadata: [MetadataKey.apiKey: "contract-test-admin-key"]))
            #expect(answer.product.title == GatewayInteractions.newProduct.title)
        }
    }

    @Test("a basket change reaches basket-svc with the caller's token")
    func routedBasket() async throws {
        try await Self.withGateway(serving: [
            "auth-svc": [try AuthInteractions.getJwks()], "basket-svc": [try GatewayInteractions.addItem()],
        ]) { client in
            let basket = try await client.unary(
                BasketContract.addItem, AddItemRequest(productId: CatalogInteractions.backpack.id),
                options: try Self.signedIn())
            #expect(basket.itemCount == 1)
        }
    }

    @Test("orders reach order-svc with the caller's token and idempotency key, refusals come back unchanged")
    func routedOrders() async throws {
        try await Self.withGateway(serving: [
            "auth-svc": [try AuthInteractions.getJwks()],
            "order-svc": [try GatewayInteractions.placeOrder(), GatewayInteractions.getMissingOrder()],
        ]) { client in
            let order = try await client.unary(
                OrderContract.placeOrder, OrderConsumerLiveTests.order(), options: CallOptions(metadata: try OrderConsumerLiveTests.metadata()))
            #expect(order.status == .paid)
            await expectRPCError(OrderReason.orderNotFound) {
                try await client.unary(
                    OrderContract.getOrder, GetOrderRequest(id: GatewayInteractions.unknownOrderID), options: try Self.signedIn())
            }
        }
    }
}
