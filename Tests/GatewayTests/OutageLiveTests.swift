import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// What clients see while a service behind the gateway is down, and after it is back.
@Suite("Gateway during outages")
struct OutageLiveTests {
    @Test("basket-svc down: UNAVAILABLE at once, screens degrade, health says which; back when it returns")
    func basketDown() async throws {
        try await withGateway { stack in
            let gateway = try stack.gateway
            let shopper = try await Self.shopperWithProductFive(stack)
            #expect(try await stack.gatewayHealth(BasketContract.service) == .serving)

            try await stack.service(.basket).kill()
            await expectRPCError(.unavailable, reason: "UPSTREAM_UNAVAILABLE") {
                try await gateway.unary(BasketContract.getBasket, Empty(), options: shopper.options())
            }
            // Once the gateway knows, the answer comes without waiting on the dead service: a
            // call with a 2 s deadline gets UNAVAILABLE, never DEADLINE_EXCEEDED.
            for _ in 0..<5 {
                let error = await expectRPCError(.unavailable, reason: "UPSTREAM_UNAVAILABLE") {
                    try await gateway.unary(
                        BasketContract.getBasket, Empty(),
                        options: CallOptions(metadata: shopper.metadata(), timeout: .seconds(2)))
                }
                #expect(error?.message.contains("basket-svc") == true)
            }
            // A watch opened meanwhile ends the same way.
            let watch = try gateway.makeCall(
                path: BasketContract.watchBasket.path, options: CallOptions(metadata: shopper.metadata(), timeout: .seconds(5)))
            try await watch.send(try JSONCodec.shared.encode(Empty()))
            watch.finishSending()
            await expectRPCError(.unavailable, reason: "UPSTREAM_UNAVAILABLE") { try await watch.nextMessage() }
            // The product page still renders, without the basket part.
            let page = try await gateway.unary(
                StorefrontContract.getProductPage, GetProductPageRequest(productId: 5), options: shopper.options())
            #expect(page.product.id == 5 && page.isFavorite && page.basketItem == nil)
            let home = try await gateway.unary(StorefrontContract.getHome, GetHomeRequest(), options: shopper.options())
            #expect(home.basketItemCount == 0 && !home.products.isEmpty)
            // basket-svc is optional: the gateway serves on, and says basket-svc is not.
            #expect(try await eventually(within: .seconds(5), every: .milliseconds(100)) {
                try await stack.gatewayHealth(BasketContract.service) == .notServing
            })
            #expect(try await stack.gatewayHealth() == .serving)

            try await stack.restart(.basket)
            #expect(await eventually(within: .seconds(15), every: .milliseconds(100)) {
                (try? await gateway.unary(BasketContract.getBasket, Empty(), options: shopper.options()))?.itemCount == 1
            })
            // Health follows the next round of checks (every second), not the call that got through.
            #expect(try await eventually(within: .seconds(5), every: .milliseconds(100)) {
                try await stack.gatewayHealth(BasketContract.service) == .serving
            })
        }
    }

    @Test("catalog-svc down: the gateway as a whole reports NOT_SERVING until it is back")
    func catalogDown() async throws {
        try await withGateway { stack in
            // The gateway starts NOT_SERVING until its first round of upstream checks.
            #expect(try await eventually(within: .seconds(5), every: .milliseconds(100)) { try await stack.gatewayHealth() == .serving })
            try await stack.service(.catalog).kill()
            #expect(try await eventually(within: .seconds(5), every: .milliseconds(100)) { try await stack.gatewayHealth() == .notServing })
            // The gateway's own service follows the gateway's status.
            #expect(try await stack.gatewayHealth(StorefrontContract.service) == .notServing)
            await expectRPCError(.unavailable, reason: "UPSTREAM_UNAVAILABLE") {
                try await stack.gateway.unary(CatalogContract.getProduct, GetProductRequest(id: 1), options: plain())
            }
            try await stack.restart(.catalog)
            #expect(try await eventually(within: .seconds(15), every: .milliseconds(100)) { try await stack.gatewayHealth() == .serving })
            let product = try await stack.gateway.unary(CatalogContract.getProduct, GetProductRequest(id: 1), options: plain())
            #expect(product.product.id == 1)
            #expect(try await stack.gatewayHealth(StorefrontContract.service) == .serving)
        }
    }

    @Test("basket-svc hanging: the screens render without the basket part, well within the caller's deadline")
    func basketHanging() async throws {
        try await withGateway { stack in
            let gateway = try stack.gateway
            let shopper = try await Self.shopperWithProductFive(stack)
            let basket = try stack.service(.basket)
            basket.pause()  // connected, taking requests, answering none
            do {
                // The screens do not wait for the basket longer than its part's cap (1.5 s), far
                // less than the gateway's 10 s default deadline or the caller's 15 s.
                let clock = ContinuousClock()
                let started = clock.now
                let page = try await gateway.unary(
                    StorefrontContract.getProductPage, GetProductPageRequest(productId: 5), options: shopper.options())
                #expect(page.product.id == 5 && page.isFavorite && page.basketItem == nil)
                let home = try await gateway.unary(StorefrontContract.getHome, GetHomeRequest(), options: shopper.options())
                #expect(home.basketItemCount == 0 && !home.products.isEmpty)
                #expect(clock.now - started < .seconds(8))
            } catch {
                basket.resume()
                throw error
            }
            basket.resume()
            #expect(await eventually(within: .seconds(10), every: .milliseconds(100)) {
                (try? await gateway.unary(
                    StorefrontContract.getProductPage, GetProductPageRequest(productId: 5), options: shopper.options()))?
                    .basketItem?.count == 1
            })
        }
    }

    /// A new shopper with product 5 among their favorites and in their basket (one).
    static func shopperWithProductFive(_ stack: ServiceStack) async throws -> Shopper {
        let gateway = try stack.gateway
        let shopper = try await stack.newShopper()
        _ = try await gateway.unary(CatalogContract.addFavorite, AddFavoriteRequest(productId: 5), options: shopper.options())
        _ = try await gateway.unary(BasketContract.addItem, AddItemRequest(productId: 5), options: shopper.options())
        return shopper
    }
}
