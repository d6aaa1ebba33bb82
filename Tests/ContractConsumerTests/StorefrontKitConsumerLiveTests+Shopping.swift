import ContractTesting
import Contracts
import StorefrontKit
import Testing

/// The calls of the `catalog`, `basket` and `orders` surfaces, each with what the library made of the
/// gateway's answer, and refusals an app branches on.
extension StorefrontKitConsumerLiveTests {
    /// The interactions StorefrontKit has where shopctl has none.
    typealias Kit = StorefrontKitInteractions

    /// The calls of the `catalog` surface.
    static let catalogCalls: [Call] = [
        Call("ListProducts in a category for catalog.products", like: Gateway.listProducts, then: .signedOut) { client in
            var pages = client.catalog.products(category: Gateway.backpack.category, pageSize: 5).makeAsyncIterator()
            let page = try #require(try await pages.next())
            #expect(!page.products.isEmpty && page.products.allSatisfy { $0.category == Gateway.backpack.category })
            #expect(try await pages.next() == nil, "the only page says there is no next one")
        },
        Call("ListProducts with a query for catalog.search", like: Kit.searchProducts, then: .signedOut) { client in
            var pages = client.catalog.search(Kit.searchQuery).makeAsyncIterator()
            let page = try #require(try await pages.next())
            #expect(page.products.map(\.id).contains(Gateway.backpack.id))
        },
        Call("ListCategories for catalog.categories", like: Gateway.listCategories, then: .signedOut) { client in
            let categories = try await client.catalog.categories()
            #expect(categories.contains { $0.name == Gateway.backpack.category && $0.productCount >= 1 })
        },
        Call("GetProduct for catalog.product(id:)", like: Gateway.showProduct, then: .signedOut) { client in
            let product = try await client.catalog.product(id: Gateway.backpack.id)
            #expect(product.id == Gateway.backpack.id)
        },
        Call("BatchGetProducts for catalog.products(ids:)", like: Kit.batchGetProducts, then: .signedOut) { client in
            let found = try await client.catalog.products(ids: [Gateway.backpack.id, CatalogInteractions.missingID])
            #expect(found.products.map(\.id) == [Gateway.backpack.id])
            #expect(found.missingIDs == [CatalogInteractions.missingID])
        },
        Call("GetProductPage signed out for catalog.productPage", like: Kit.productPageSignedOut, then: .signedOut) { client in
            let page = try await client.catalog.productPage(id: Gateway.backpack.id)
            #expect(page.product.id == Gateway.backpack.id)
            #expect(!page.isFavorite)
            #expect(page.basketItem == nil)
        },
        Call("GetProductPage signed in for catalog.productPage", like: Kit.productPageSignedIn, signedIn: true, then: .unchanged) {
            client in
            let page = try await client.catalog.productPage(id: Gateway.backpack.id)
            #expect(page.isFavorite)
            #expect(page.basketItem?.productId == Gateway.backpack.id)
            #expect(page.basketItem?.count == Gateway.backpackLine.count)
        },
        Call("GetHome signed in for catalog.home", like: Kit.home, signedIn: true, then: .unchanged) { client in
            let home = try await client.catalog.home()
            #expect(!home.categories.isEmpty && !home.products.isEmpty)
            #expect(home.basketItemCount == Gateway.backpackLine.count)
        },
        Call("ListFavorites for catalog.favorites", like: Gateway.listFavorites, signedIn: true, then: .unchanged) { client in
            var pages = client.catalog.favorites().makeAsyncIterator()
            let favorites = try #require(try await pages.next())
            #expect(favorites.map(\.id).contains(Gateway.backpack.id))
        },
        Call("AddFavorite for catalog.addFavorite", like: Gateway.addFavorite, signedIn: true, then: .unchanged) { client in
            try await client.catalog.addFavorite(productID: Gateway.backpack.id)
        },
        Call("RemoveFavorite for catalog.removeFavorite", like: Gateway.removeFavorite, signedIn: true, then: .unchanged) { client in
            try await client.catalog.removeFavorite(productID: Gateway.backpack.id)
        },
        Call("GetProduct of a missing product for catalog.product(id:)", like: Kit.productNotFound, then: .signedOut) { client in
            await expectRefusal(.productNotFound) { _ = try await client.catalog.product(id: CatalogInteractions.missingID) }
        },
    ]

    /// The calls of the `basket` surface that answer once (`changes`, a stream that reconnects,
    /// is checked live in StorefrontKitBasketLiveTests).
    static let basketCalls: [Call] = [
        Call("GetBasket for basket.current", like: Gateway.getBasket, signedIn: true, then: .unchanged) { client in
            let basket = try await client.basket.current()
            #expect(basket.items.map(\.productId) == Gateway.basket.items.map(\.productId))
        },
        Call("AddItem for basket.add", like: Gateway.addItem, signedIn: true, then: .unchanged) { client in
            let basket = try await client.basket.add(productID: Gateway.backpack.id, count: 2)
            #expect(basket.items.contains { $0.productId == Gateway.backpack.id })
        },
        Call("UpdateItemCount for basket.setCount", like: Gateway.updateItemCount, signedIn: true, then: .unchanged) { client in
            let basket = try await client.basket.setCount(itemID: Gateway.backpackLine.id, count: 3)
            #expect(basket.items.first { $0.id == Gateway.backpackLine.id }?.count == 3)
        },
        Call("RemoveItem for basket.remove", like: Gateway.removeItem, signedIn: true, then: .unchanged) { client in
            let basket = try await client.basket.remove(itemID: Gateway.lampLine.id)
            #expect(!basket.items.contains { $0.id == Gateway.lampLine.id })
        },
        Call("ClearBasket for basket.clear", like: Gateway.clearBasket, signedIn: true, then: .unchanged) { client in
            let basket = try await client.basket.clear()
            #expect(basket.items.isEmpty && basket.itemCount == 0)
        },
    ]

    /// The calls of the `orders` surface.
    static let orderCalls: [Call] = [
        Call("PlaceOrder for orders.place", like: Gateway.placeOrder, signedIn: true, then: .unchanged) { client in
            let order = try await client.orders.place(
                address: Gateway.orderRequest.shippingAddress, payment: Gateway.orderRequest.payment)
            #expect(order.status == .paid)
            #expect(order.items.map(\.productId) == [Gateway.backpack.id])
        },
        Call("ListOrders for orders.orders", like: Gateway.listOrders, signedIn: true, then: .unchanged) { client in
            var pages = client.orders.orders().makeAsyncIterator()
            let orders = try #require(try await pages.next())
            #expect(orders.map(\.id) == [Gateway.paidOrder.id])
        },
        Call("GetOrder for orders.order(id:)", like: Gateway.getOrder, signedIn: true, then: .unchanged) { client in
            let order = try await client.orders.order(id: Gateway.paidOrder.id)
            #expect(order.id == Gateway.paidOrder.id && order.status == .paid)
        },
        Call("CancelOrder for orders.cancel(id:)", like: Gateway.cancelOrder, signedIn: true, then: .unchanged) { client in
            let order = try await client.orders.cancel(id: Gateway.paidOrder.id)
            #expect(order.id == Gateway.paidOrder.id && order.status == .cancelled)
        },
        Call("PlaceOrder with an empty basket for orders.place", like: Kit.placeOrderWithEmptyBasket, signedIn: true, then: .unchanged) {
            client in
            await expectRefusal(.emptyBasket) {
                _ = try await client.orders.place(address: Gateway.orderRequest.shippingAddress, payment: Gateway.orderRequest.payment)
            }
        },
        Call("CancelOrder of a cancelled order for orders.cancel(id:)", like: Kit.cancelCancelledOrder, signedIn: true, then: .unchanged) {
            client in
            await expectRefusal(.orderNotCancellable) { try await client.orders.cancel(id: Kit.cancelledOrder.id) }
        },
    ]

    /// Checks that `call` throws the ``StorefrontError`` with `reason` an app branches on.
    static func expectRefusal(
        _ reason: StorefrontError.Reason, sourceLocation: SourceLocation = #_sourceLocation, _ call: () async throws -> Void
    ) async {
        let error = await #expect(throws: StorefrontError.self, sourceLocation: sourceLocation) { try await call() }
        #expect(error?.reason == reason, sourceLocation: sourceLocation)
    }
}
