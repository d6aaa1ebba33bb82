import Contracts
import Foundation
import InProcessServices
import RPC
import ServiceTestSupport
import Testing

/// What clients see while a service behind the gateway cannot be reached, and after it is back:
/// the gateway and the four services built in this process, the gateway cut off from one of
/// them as if its process were killed (``ServiceStack/cutGatewayOff(from:)``).
@Suite("Gateway during outages")
struct OutageTests {
    @Test("basket-svc down: UNAVAILABLE at once, screens degrade, health says which; back when it returns")
    func basketDown() async throws {
        try await withGateway { stack in
            let gateway = try stack.gateway
            let shopper = try await stack.shopperWithProductFive()
            // The gateway reports an upstream's health from its first round of checks on.
            #expect(try await eventually(within: .seconds(5), every: .milliseconds(50)) {
                try await stack.gatewayHealth(BasketContract.service) == .serving
            })

            try await stack.cutGatewayOff(from: .basket)
            await expectRPCError(.unavailable, reason: "UPSTREAM_UNAVAILABLE") {
                try await gateway.unary(BasketContract.getBasket, Empty(), options: shopper.options())
            }
            // Once the gateway knows, the answer comes without waiting on the lost service: a
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
            await expectRPCError(.unavailable, reason: "UPSTREAM_UNAVAILABLE") {
                try await openBasketWatch(shopper, through: gateway, timeout: .seconds(5))
            }
            // The product page still renders, without the basket part.
            let page = try await gateway.unary(
                StorefrontContract.getProductPage, GetProductPageRequest(productId: 5), options: shopper.options())
            #expect(page.product.id == 5 && page.isFavorite && page.basketItem == nil)
            let home = try await gateway.unary(StorefrontContract.getHome, GetHomeRequest(), options: shopper.options())
            #expect(home.basketItemCount == 0 && !home.products.isEmpty)
            // basket-svc is optional: the gateway serves on, and says basket-svc is not.
            #expect(try await eventually(within: .seconds(5), every: .milliseconds(50)) {
                try await stack.gatewayHealth(BasketContract.service) == .notServing
            })
            #expect(try await stack.gatewayHealth() == .serving)

            try stack.reconnectGateway(to: .basket)
            #expect(await eventually(within: .seconds(15), every: .milliseconds(100)) {
                (try? await gateway.unary(BasketContract.getBasket, Empty(), options: shopper.options()))?.itemCount == 1
            })
            // Health follows the next round of checks (every second), not the call that got through.
            #expect(try await eventually(within: .seconds(5), every: .milliseconds(50)) {
                try await stack.gatewayHealth(BasketContract.service) == .serving
            })
        }
    }

    @Test("catalog-svc down: the gateway as a whole reports NOT_SERVING until it is back")
    func catalogDown() async throws {
        try await withGateway { stack in
            // The gateway starts NOT_SERVING until its first round of upstream checks.
            #expect(try await eventually(within: .seconds(5), every: .milliseconds(50)) { try await stack.gatewayHealth() == .serving })
            try await stack.cutGatewayOff(from: .catalog)
            #expect(try await eventually(within: .seconds(5), every: .milliseconds(50)) { try await stack.gatewayHealth() == .notServing })
            // The gateway's own service follows the gateway's status.
            #expect(try await stack.gatewayHealth(StorefrontContract.service) == .notServing)
            await expectRPCError(.unavailable, reason: "UPSTREAM_UNAVAILABLE") {
                try await stack.gateway.unary(CatalogContract.getProduct, GetProductRequest(id: 1), options: plain())
            }
            try stack.reconnectGateway(to: .catalog)
            #expect(try await eventually(within: .seconds(15), every: .milliseconds(100)) { try await stack.gatewayHealth() == .serving })
            let product = try await stack.gateway.unary(CatalogContract.getProduct, GetProductRequest(id: 1), options: plain())
            #expect(product.product.id == 1)
            #expect(try await stack.gatewayHealth(StorefrontContract.service) == .serving)
        }
    }
}
