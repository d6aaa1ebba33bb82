import Contracts
import Foundation
import InProcessServices
import RPC
import ServiceTestSupport
import Testing

/// Server streams through the gateway, the deadlines that end them, and the composed screens
/// of StorefrontService: the gateway and the four services built in this process.
@Suite("Gateway streams, deadlines and composed screens")
struct StreamAndScreenTests {
    @Test("WatchBasket and WatchAuthState pass through, each update as it happens")
    func watches() async throws {
        try await withGateway { stack in
            let gateway = try stack.gateway
            let shopper = try await stack.newShopper()
            let watchOptions = CallOptions(metadata: shopper.metadata(), timeout: .seconds(30))
            let basketWatch = try gateway.makeCall(path: BasketContract.watchBasket.path, options: watchOptions)
            try await basketWatch.send(try JSONCodec.shared.encode(Empty()))
            basketWatch.finishSending()
            let first = try await next(Basket.self, from: basketWatch)
            _ = try await gateway.unary(BasketContract.addItem, AddItemRequest(productId: 4, count: 3), options: shopper.options())
            let second = try await next(Basket.self, from: basketWatch)
            basketWatch.cancel()
            #expect(first.itemCount == 0 && second.itemCount == 3 && second.items.first?.productId == 4)

            let authWatch = try gateway.makeCall(path: AuthContract.watchAuthState.path, options: watchOptions)
            try await authWatch.send(try JSONCodec.shared.encode(Empty()))
            authWatch.finishSending()
            let state = try await next(WatchAuthStateResponse.self, from: authWatch)
            authWatch.cancel()
            #expect(state.state == .signedIn)
            #expect(state.user?.email == shopper.email)
        }
    }

    @Test("a watch through the gateway ends at the caller's deadline, and the gateway lets go of its place")
    func watchEndsAtDeadline() async throws {
        try await withGateway(InProcessGatewayOptions(maxWatchesPerUser: 1)) { stack in
            let gateway = try stack.gateway
            let shopper = try await stack.newShopper()
            let clock = ContinuousClock()
            let opened = clock.now
            let watch = try await openBasketWatch(shopper, through: gateway, timeout: .milliseconds(800))
            await expectRPCError(.deadlineExceeded) { try await watch.nextMessage() }
            #expect(clock.now - opened >= .milliseconds(800))
            // The only place of the cap comes back once the gateway's side of the watch has
            // ended with it: a new watch is let in.
            let reopened = await eventually(within: .seconds(5), every: .milliseconds(50)) {
                guard let call = try? await openBasketWatch(shopper, through: gateway) else { return false }
                call.cancel()
                return true
            }
            #expect(reopened)
        }
    }

    @Test("GetProductPage: the product for anyone; favorite flag and basket line for the signed-in caller")
    func productPage() async throws {
        try await withGateway { stack in
            let gateway = try stack.gateway
            let anonymous = try await gateway.unary(
                StorefrontContract.getProductPage, GetProductPageRequest(productId: 6), options: plain())
            #expect(anonymous.product.id == 6)
            #expect(!anonymous.isFavorite && anonymous.basketItem == nil)

            let shopper = try await stack.newShopper()
            _ = try await gateway.unary(CatalogContract.addFavorite, AddFavoriteRequest(productId: 6), options: shopper.options())
            _ = try await gateway.unary(BasketContract.addItem, AddItemRequest(productId: 6, count: 2), options: shopper.options())
            let page = try await gateway.unary(
                StorefrontContract.getProductPage, GetProductPageRequest(productId: 6), options: shopper.options())
            #expect(page.product == anonymous.product)
            #expect(page.isFavorite)
            #expect(page.basketItem?.productId == 6 && page.basketItem?.count == 2)
            let other = try await gateway.unary(
                StorefrontContract.getProductPage, GetProductPageRequest(productId: 7), options: shopper.options())
            #expect(!other.isFavorite && other.basketItem == nil)

            await expectRPCError(.notFound, reason: "PRODUCT_NOT_FOUND") {
                try await gateway.unary(StorefrontContract.getProductPage, GetProductPageRequest(productId: 999_999), options: plain())
            }
            await expectRPCError(.invalidArgument) {
                try await gateway.unary(StorefrontContract.getProductPage, GetProductPageRequest(productId: 0), options: plain())
            }
            await expectRPCError(.unauthenticated, reason: "INVALID_ACCESS_TOKEN") {
                try await gateway.unary(
                    StorefrontContract.getProductPage, GetProductPageRequest(productId: 6),
                    options: plain([MetadataKey.authorization: "Bearer nope"]))
            }
        }
    }

    @Test("GetHome: categories, the first page as ListProducts gives it, and the caller's basket size")
    func home() async throws {
        try await withGateway { stack in
            let gateway = try stack.gateway
            let home = try await gateway.unary(
                StorefrontContract.getHome, GetHomeRequest(category: "jewelery", pageSize: 4), options: plain())
            let listing = try await gateway.unary(
                CatalogContract.listProducts, ListProductsRequest(category: "jewelery", pageSize: 4), options: plain())
            let categories = try await gateway.unary(CatalogContract.listCategories, Empty(), options: plain())
            #expect(home.categories == categories.categories)
            #expect(home.products == listing.products)
            #expect(!home.nextPageToken.isEmpty)
            #expect(home.basketItemCount == 0)
            // The token continues with ListProducts.
            let next = try await gateway.unary(
                CatalogContract.listProducts,
                ListProductsRequest(category: "jewelery", pageSize: 4, pageToken: home.nextPageToken), options: plain())
            #expect(!next.products.isEmpty && Set(next.products.map(\.id)).isDisjoint(with: home.products.map(\.id)))

            let shopper = try await stack.newShopper()
            _ = try await gateway.unary(BasketContract.addItem, AddItemRequest(productId: 1, count: 2), options: shopper.options())
            _ = try await gateway.unary(BasketContract.addItem, AddItemRequest(productId: 2, count: 1), options: shopper.options())
            let mine = try await gateway.unary(StorefrontContract.getHome, GetHomeRequest(), options: shopper.options())
            #expect(mine.basketItemCount == 3)
            #expect(mine.products.count == 20)
            await expectRPCError(.invalidArgument) {
                try await gateway.unary(StorefrontContract.getHome, GetHomeRequest(pageSize: -1), options: plain())
            }
        }
    }

    @Test("GetHome refuses a category over its limit (characters, or bytes of combining marks) before any call goes out")
    func homeCategoryLimit() async throws {
        try await withGateway { stack in
            let gateway = try stack.gateway
            // With catalog-svc out of reach, a call that went out would end UNAVAILABLE: the
            // refusal can only come from the gateway itself.
            try await stack.cutGatewayOff(from: .catalog)
            for category in [String(repeating: "c", count: 101), "c" + String(repeating: "\u{301}", count: 400)] {
                let refused = await expectRPCError(CatalogReason.invalidCategory) {
                    try await gateway.unary(StorefrontContract.getHome, GetHomeRequest(category: category), options: plain())
                }
                #expect(refused?.violatedFields == ["category"])
            }
            try stack.reconnectGateway(to: .catalog)
            // At the limit it is a listing (of nothing: no such category).
            let home = try await gateway.unary(
                StorefrontContract.getHome, GetHomeRequest(category: String(repeating: "c", count: 100)), options: plain())
            #expect(home.products.isEmpty)
        }
    }
}
