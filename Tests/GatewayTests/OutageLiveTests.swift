import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// What only processes show of an outage (OutageTests has the rest, the gateway cut off from a
/// service in this process): a killed process refusing the gateway's connections, the
/// connections made again to its restarted process, and a stopped process that takes calls and
/// answers none.
@Suite("Gateway during outages, live")
struct OutageLiveTests {
    @Test("basket-svc killed: UPSTREAM_UNAVAILABLE and NOT_SERVING for it; served again once it is restarted")
    func basketKilledAndRestarted() async throws {
        try await withLiveGateway { stack in
            let gateway = try stack.gateway
            let shopper = try await stack.shopperWithProductFive()
            #expect(try await stack.gatewayHealth(BasketContract.service) == .serving)

            try await stack.service(.basket).kill()
            let error = await expectRPCError(.unavailable, reason: "UPSTREAM_UNAVAILABLE") {
                try await gateway.unary(BasketContract.getBasket, Empty(), options: shopper.options())
            }
            #expect(error?.message.contains("basket-svc") == true)
            #expect(try await eventually(within: .seconds(5), every: .milliseconds(100)) {
                try await stack.gatewayHealth(BasketContract.service) == .notServing
            })
            #expect(try await stack.gatewayHealth() == .serving)

            try await stack.restart(.basket)
            #expect(await eventually(within: .seconds(15), every: .milliseconds(100)) {
                (try? await gateway.unary(BasketContract.getBasket, Empty(), options: shopper.options()))?.itemCount == 1
            })
            #expect(try await eventually(within: .seconds(5), every: .milliseconds(100)) {
                try await stack.gatewayHealth(BasketContract.service) == .serving
            })
        }
    }

    @Test("basket-svc hanging: the screens render without the basket part, well within the caller's deadline")
    func basketHanging() async throws {
        try await withLiveGateway { stack in
            let gateway = try stack.gateway
            let shopper = try await stack.shopperWithProductFive()
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
}
