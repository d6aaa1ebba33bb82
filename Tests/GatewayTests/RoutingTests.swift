import Contracts
import Foundation
import InProcessServices
import RPC
import ServiceTestSupport
import Testing
import JSON

/// The gateway routes every public method, unchanged, and guards what it must: the gateway
/// and the four services built in this process.
@Suite("Gateway routing, keys, tokens and limits")
struct RoutingTests {
    @Test("public methods of every service answer through the gateway exactly as the service does")
    func routesUnchanged() async throws {
        try await withGateway { stack in
            let gateway = try stack.gateway
            let direct = try await stack.client(.catalog).unary(CatalogContract.getProduct, GetProductRequest(id: 3), options: plain())
            let routed = try await gateway.unary(CatalogContract.getProduct, GetProductRequest(id: 3), options: plain())
            #expect(routed == direct)
            let listing = try await gateway.unary(
                CatalogContract.listProducts, ListProductsRequest(query: "monitor", pageSize: 5), options: plain())
            #expect(!listing.products.isEmpty)
            let shopper = try await stack.newShopper()  // SignUp, VerifyEmail, SignIn through the gateway
            let user = try await gateway.unary(AuthContract.getCurrentUser, Empty(), options: shopper.options()).user
            #expect(user.email == shopper.email)
            let basket = try await gateway.unary(
                BasketContract.addItem, AddItemRequest(productId: 3, count: 2), options: shopper.options())
            #expect(basket.itemCount == 2)
            let orders = try await gateway.unary(OrderContract.listOrders, PageRequest(), options: shopper.options())
            #expect(orders.orders.isEmpty)
            // An error comes back with its code, reason and message as the service sent them.
            let routedError = await expectRPCError(.notFound, reason: "PRODUCT_NOT_FOUND") {
                try await gateway.unary(CatalogContract.getProduct, GetProductRequest(id: 999_999), options: plain())
            }
            let directError = await expectRPCError(.notFound, reason: "PRODUCT_NOT_FOUND") {
                try await stack.client(.catalog).unary(CatalogContract.getProduct, GetProductRequest(id: 999_999), options: plain())
            }
            #expect(routedError?.message == directError?.message)
            await expectRPCError(.alreadyExists, reason: "ALREADY_IN_BASKET") {
                try await gateway.unary(BasketContract.addItem, AddItemRequest(productId: 3), options: shopper.options())
            }
        }
    }

    @Test("internal methods are never routed, even with the internal key")
    func internalMethodsUnimplemented() async throws {
        try await withGateway { stack in
            let gateway = try stack.gateway
            let key: Metadata = [MetadataKey.apiKey: stack.internalKey]
            await expectRPCError(.unimplemented) {
                try await gateway.unary(
                    CatalogContract.reserveStock,
                    ReserveStockRequest(reservationId: "r1", items: [StockReservationItem(productId: 1, count: 1)]),
                    options: plain(key))
            }
            await expectRPCError(.unimplemented) {
                try await gateway.unary(CatalogContract.releaseStock, ReleaseStockRequest(reservationId: "r1"), options: plain(key))
            }
            await expectRPCError(.unimplemented) {
                try await gateway.unary(
                    SessionRevocationContract.listRevokedSessions, ListRevokedSessionsRequest(afterSequence: 0), options: plain(key))
            }
            // The stock was not touched.
            let product = try await stack.client(.catalog).unary(CatalogContract.getProduct, GetProductRequest(id: 1), options: plain())
            let routed = try await gateway.unary(CatalogContract.getProduct, GetProductRequest(id: 1), options: plain())
            #expect(product.product.stock == routed.product.stock)
        }
    }

    @Test("admin methods pass only with the right x-api-key, streams included")
    func adminKey() async throws {
        try await withGateway { stack in
            let gateway = try stack.gateway
            var product = try await gateway.unary(CatalogContract.getProduct, GetProductRequest(id: 2), options: plain()).product
            product.title = "Renamed through the gateway"
            await expectRPCError(.unauthenticated, reason: "MISSING_API_KEY") {
                try await gateway.unary(CatalogContract.upsertProduct, UpsertProductRequest(product: product), options: plain())
            }
            await expectRPCError(.permissionDenied, reason: "INVALID_API_KEY") {
                try await gateway.unary(
                    CatalogContract.upsertProduct, UpsertProductRequest(product: product),
                    options: plain([MetadataKey.apiKey: "not-the-key"]))
            }
            let admin: Metadata = [MetadataKey.apiKey: stack.adminKey]
            let saved = try await gateway.unary(
                CatalogContract.upsertProduct, UpsertProductRequest(product: product), options: plain(admin))
            #expect(saved.product.title == "Renamed through the gateway")
            // ImportProducts, client-streaming, passes through message by message.
            let imported = try await gateway.clientStreaming(CatalogContract.importProducts, options: plain(admin)) { sender in
                for index in 0..<3 {
                    try await sender.send(ImportProductsRequest(product: Product(
                        title: "Imported \(index)", description: "Through the gateway", category: "electronics",
                        price: Money(amount: 1_000 + index, currency: "USD"), image: "https://example.com/\(index).jpg",
                        rating: Rating(rate: 4, count: 1), stock: 5)))
                }
            }
            #expect(imported.created == 3 && imported.failed.isEmpty)
            await expectRPCError(.unauthenticated, reason: "MISSING_API_KEY") {
                try await gateway.clientStreaming(CatalogContract.importProducts, options: plain()) { _ in }
            }
        }
    }

    @Test("user methods need a valid token at the gateway, screens included")
    func tokensCheckedAtTheGateway() async throws {
        try await withGateway { stack in
            let gateway = try stack.gateway
            await expectRPCError(.unauthenticated, reason: "MISSING_TOKEN") {
                try await gateway.unary(BasketContract.getBasket, Empty(), options: plain())
            }
            await expectRPCError(.unauthenticated, reason: "INVALID_ACCESS_TOKEN") {
                try await gateway.unary(
                    BasketContract.getBasket, Empty(), options: plain([MetadataKey.authorization: "Bearer not.a.jwt"]))
            }
            await expectRPCError(.unauthenticated, reason: "MISSING_TOKEN") {
                try await gateway.unary(OrderContract.listOrders, PageRequest(), options: plain())
            }
            let shopper = try await stack.newShopper()
            #expect(try await gateway.unary(BasketContract.getBasket, Empty(), options: shopper.options()).itemCount == 0)
        }
    }

    @Test("over the rate limit, a client gets RATE_LIMITED while health checks still answer")
    func rateLimited() async throws {
        try await withGateway(InProcessGatewayOptions(rateLimit: 0.5, rateBurst: 3)) { stack in
            let gateway = try stack.gateway
            for _ in 0..<3 {
                _ = try await gateway.unary(CatalogContract.getProduct, GetProductRequest(id: 1), options: plain())
            }
            let refused = await expectRPCError(.resourceExhausted, reason: "RATE_LIMITED") {
                try await gateway.unary(CatalogContract.getProduct, GetProductRequest(id: 1), options: plain())
            }
            // It says how long to wait: one token every 2 s, so 1 or 2 whole seconds.
            let wait = try #require(refused?.details?["retryAfterSeconds"]?.numberValue, "no retryAfterSeconds: \(String(describing: refused))")
            #expect([1, 2].contains(wait), "retryAfterSeconds \(wait)")
            #expect(refused?.message.hasSuffix("try again in \(Int(wait)) s.") == true, "\(String(describing: refused?.message))")
            // Health counts like any call (issue 25): the flooding address's probe is limited too,
            // while a probe from its own address — an orchestrator's — is served.
            await expectRPCError(.resourceExhausted, reason: "RATE_LIMITED") { _ = try await stack.gatewayHealth() }
            let probe = try stack.gatewayClient(from: "[::1]:50000")
            let status: ServingStatus?
            do {
                status = try await probe.unary(HealthContract.check, HealthCheckRequest(), options: plain()).status
            } catch {
                status = nil
                Issue.record("the probe from another address was refused: \(error)")
            }
            await probe.close()
            #expect(status == .serving)
        }
    }

    @Test("a signed-out session is refused by the gateway itself, even on a screen that renders without a user")
    func revokedSessionRefusedHere() async throws {
        try await withGateway { stack in
            let gateway = try stack.gateway
            let shopper = try await stack.newShopper()
            let page = GetProductPageRequest(productId: 2)
            _ = try await gateway.unary(StorefrontContract.getProductPage, page, options: shopper.options())
            _ = try await gateway.unary(AuthContract.signOut, SignOutRequest(), options: shopper.options())
            // The gateway learns of it from auth-svc's revocation feed (every 15 s). Only its
            // own check can refuse GetProductPage: the screen's user parts fail silently.
            let signedOut = ContinuousClock.now
            var refusal: RPCError?
            while refusal == nil, ContinuousClock.now - signedOut < .seconds(45) {
                do {
                    _ = try await gateway.unary(StorefrontContract.getProductPage, page, options: shopper.options())
                    try await Task.sleep(for: .milliseconds(500))
                } catch let error as RPCError {
                    refusal = error
                }
            }
            let error = try #require(refusal, "the signed-out session still worked at the gateway")
            #expect(error.code == .unauthenticated && error.reason == AuthReason.sessionRevoked.rawValue, "\(error)")
            #expect(try await gateway.unary(StorefrontContract.getProductPage, page, options: plain()).product.id == 2)
        }
    }

    @Test("after 20 access tokens that do not verify, an address's bad tokens are refused RATE_LIMITED; valid tokens and calls without one go on")
    func invalidTokensThrottled() async throws {
        try await withGateway { stack in
            let gateway = try stack.gateway
            let shopper = try await stack.newShopper()
            // The shopper's token with its signature changed: well formed, but it does not verify.
            let bad = plain([MetadataKey.authorization: "Bearer \(forged(shopper.accessToken))"])
            for _ in 0..<20 {
                await expectRPCError(.unauthenticated, reason: "INVALID_ACCESS_TOKEN") {
                    try await gateway.unary(BasketContract.getBasket, Empty(), options: bad)
                }
            }
            await expectRPCError(.resourceExhausted, reason: "RATE_LIMITED") {
                try await gateway.unary(BasketContract.getBasket, Empty(), options: bad)
            }
            // Only the bad tokens wait: a genuine one from that address is checked and served.
            #expect(try await gateway.unary(BasketContract.getBasket, Empty(), options: shopper.options()).itemCount == 0)
            #expect(try await gateway.unary(CatalogContract.getProduct, GetProductRequest(id: 1), options: plain()).product.id == 1)
        }
    }
}
