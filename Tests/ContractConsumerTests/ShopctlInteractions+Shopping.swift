import ContractTesting
import Contracts
import RPC
import JSON

/// What `shopctl favorites …`, `basket …` and `order …` expect of the gateway.
extension ShopctlInteractions {
    /// The backpack of the examples.
    static let backpack = CatalogInteractions.backpack
    /// "a product exists" for the backpack.
    static func backpackExists() throws -> ProviderState { try CatalogInteractions.exists(backpack) }

    // MARK: Favorites

    /// The signed-in user favors the backpack.
    static let favorsBackpack = ProviderState(
        "the user favors a product", ["email": .string(email), "productId": .number(Double(CatalogInteractions.backpack.id))])

    /// `favorites add 7`.
    static func addFavorite() throws -> InteractionSpec {
        InteractionSpec(
            "AddFavorite for favorites add", given: [try backpackExists(), signedIn], path: CatalogContract.addFavorite.path,
            metadata: userMetadata, generators: userGenerators, response: try empty())
    }

    /// `favorites remove 7`.
    static func removeFavorite() throws -> InteractionSpec {
        InteractionSpec(
            "RemoveFavorite for favorites remove", given: [try backpackExists(), signedIn, favorsBackpack],
            path: CatalogContract.removeFavorite.path, metadata: userMetadata, generators: userGenerators,
            response: try empty())
    }

    /// `favorites list`.
    static func listFavorites() throws -> InteractionSpec {
        InteractionSpec(
            "ListFavorites for favorites list", given: [try backpackExists(), signedIn, favorsBackpack],
            path: CatalogContract.listFavorites.path, metadata: userMetadata, generators: userGenerators,
            response: try .message(
                encoding: ListFavoritesResponse(products: [backpack], nextPageToken: ""),
                rules: CatalogInteractions.productRules.merging([
                    "$.products": .type(minItems: 1), "$.products[*].id": .equality,
                ]) { $1 }))
    }

    /// What the favorites commands expect.
    static func ofFavorites() throws -> [InteractionSpec] { [try addFavorite(), try removeFavorite(), try listFavorites()] }

    // MARK: Basket

    /// The basket of the examples: the backpack twice and the lamp once.
    static let basket = BasketInteractions.twoLines
    /// The backpack's line.
    static var backpackLine: BasketItem { basket.items[0] }
    /// The lamp's line.
    static var lampLine: BasketItem { basket.items[1] }

    /// The provider state: the signed-in user's basket holds `items`, with their line ids.
    static func basketHolds(_ items: [BasketItem]) throws -> ProviderState {
        ProviderState("the user's basket holds", ["email": .string(email), "items": try JSONValue(encoding: items)])
    }

    /// A basket answer, its lines matched by product and count (at least `minimum` of them).
    static func basketAnswer(_ basket: Basket, minimum: Int) throws -> ResponseExpectation {
        try .message(encoding: basket, rules: BasketInteractions.countedRules(minItems: minimum))
    }

    /// A basket command acting on the signed-in user's `basket` (both lines held), answered
    /// with `response`.
    static func onHeldBasket(_ description: String, path: String, response: ResponseExpectation) throws -> InteractionSpec {
        InteractionSpec(
            description, given: [signedIn, try basketHolds(basket.items)], path: path, metadata: userMetadata,
            generators: userGenerators, response: response)
    }

    /// `basket show` (and the lookup of `basket set`/`remove` with an item id prefix).
    static func getBasket() throws -> InteractionSpec {
        try onHeldBasket(
            "GetBasket for basket show", path: BasketContract.getBasket.path, response: try basketAnswer(basket, minimum: 2))
    }

    /// `basket add 7 --count 2`.
    static func addItem() throws -> InteractionSpec {
        InteractionSpec(
            "AddItem for basket add", given: [try backpackExists(), signedIn], path: BasketContract.addItem.path,
            metadata: userMetadata, generators: userGenerators,
            response: try basketAnswer(BasketInteractions.oneLine, minimum: 1))
    }

    /// `basket set <backpack line> 3`.
    static func updateItemCount() throws -> InteractionSpec {
        var changed = basket
        changed.items[0] = BasketInteractions.line(id: backpackLine.id, backpack, count: 3)
        changed.itemCount = 4
        changed.total = Money(amount: 3 * backpack.price.amount + CatalogInteractions.lamp.price.amount, currency: "USD")
        changed.version = 3
        return try onHeldBasket(
            "UpdateItemCount for basket set", path: BasketContract.updateItemCount.path,
            response: try basketAnswer(changed, minimum: 2))
    }

    /// `basket remove <lamp line>`.
    static func removeItem() throws -> InteractionSpec {
        var remaining = BasketInteractions.oneLine
        remaining.version = 3
        return try onHeldBasket(
            "RemoveItem for basket remove", path: BasketContract.removeItem.path,
            response: try basketAnswer(remaining, minimum: 1))
    }

    /// `basket clear`.
    static func clearBasket() throws -> InteractionSpec {
        let cleared = Basket(items: [], itemCount: 0, total: .zero(currency: "USD"), version: 3, updatedAt: "2026-11-22T01:41:17.250Z")
        return try onHeldBasket(
            "ClearBasket for basket clear", path: BasketContract.clearBasket.path,
            response: try .message(
                encoding: cleared,
                rules: BasketInteractions.basketRules.merging(["$.items": .equality, "$.itemCount": .equality]) { $1 }))
    }

    /// `basket watch`: the basket, then the basket after another device added the lamp; the
    /// stream stays open until Ctrl-C.
    static func watchBasket() throws -> InteractionSpec {
        InteractionSpec(
            "WatchBasket for basket watch, through a change", given: [signedIn, try basketHolds([backpackLine])],
            path: BasketContract.watchBasket.path, metadata: userMetadata, generators: userGenerators,
            response: try BasketInteractions.watchedWhileLampIsAdded(owner: ["email": .string(email)]))
    }

    /// What the basket commands expect.
    static func ofBasket() throws -> [InteractionSpec] {
        [try getBasket(), try addItem(), try updateItemCount(), try removeItem(), try clearBasket(), try watchBasket()]
    }

    // MARK: Orders

    /// The address and card `order place` is given.
    static let orderRequest = OrderConsumerLiveTests.order()

    /// A paid order of the backpack twice, as order-svc answers it.
    static let paidOrder = Order(
        id: "7c9e6679-7425-40de-944b-e07fc1f90ae7", status: .paid,
        items: [
            OrderItem(
                productId: backpack.id, productTitle: backpack.title, unitPrice: backpack.price, count: 2,
                lineTotal: backpack.price.multiplied(by: 2))
        ],
        total: backpack.price.multiplied(by: 2), shippingAddress: orderRequest.shippingAddress,
        payment: PaymentSummary(brand: "visa", last4: "4242"), createdAt: "2026-11-22T01:41:17Z",
        updatedAt: "2026-11-22T01:41:18Z")

    /// The signed-in user has `paidOrder`.
    static func hasPaidOrder() throws -> ProviderState {
        ProviderState("the user has a paid order", ["email": .string(email), "order": try JSONValue(encoding: paidOrder)])
    }

    /// The matchers of an order answer: shapes by type, the id and status exactly.
    static let orderRules: [String: Matcher] = [
        "$": Matcher.type.allowingExtraFields, "$.status": .equality, "$.items": .type(minItems: 1),
        "$.createdAt": .regex(Matcher.Pattern.timestamp), "$.updatedAt": .regex(Matcher.Pattern.timestamp),
    ]

    /// `order place …`: the basket ordered and paid, with an idempotency key.
    static func placeOrder() throws -> InteractionSpec {
        InteractionSpec(
            "PlaceOrder for order place",
            given: [try backpackExists(), signedIn, try basketHolds([backpackLine])], path: OrderContract.placeOrder.path,
            metadata: userMetadata.merging([MetadataKey.idempotencyKey: .regex(Matcher.Pattern.uuid)]) { $1 },
            generators: userGenerators,
            response: try .message(
                encoding: paidOrder, rules: orderRules.merging(["$.id": .regex(Matcher.Pattern.uuid)]) { $1 }))
    }

    /// `order list`.
    static func listOrders() throws -> InteractionSpec {
        InteractionSpec(
            "ListOrders for order list", given: [signedIn, try hasPaidOrder()], path: OrderContract.listOrders.path,
            metadata: userMetadata, generators: userGenerators,
            response: try .message(
                encoding: ListOrdersResponse(orders: [paidOrder], nextPageToken: ""),
                rules: [
                    "$": Matcher.type.allowingExtraFields, "$.orders": .type(minItems: 1), "$.orders[*].id": .equality,
                    "$.orders[*].status": .equality,
                ]))
    }

    /// `order show ID`.
    static func getOrder() throws -> InteractionSpec {
        InteractionSpec(
            "GetOrder for order show", given: [signedIn, try hasPaidOrder()], path: OrderContract.getOrder.path,
            metadata: userMetadata, generators: userGenerators,
            response: try .message(encoding: paidOrder, rules: orderRules.merging(["$.id": .equality]) { $1 }))
    }

    /// `order cancel ID`.
    static func cancelOrder() throws -> InteractionSpec {
        var cancelled = paidOrder
        cancelled.status = .cancelled
        return InteractionSpec(
            "CancelOrder for order cancel", given: [signedIn, try hasPaidOrder()], path: OrderContract.cancelOrder.path,
            metadata: userMetadata, generators: userGenerators,
            response: try .message(encoding: cancelled, rules: orderRules.merging(["$.id": .equality]) { $1 }))
    }

    /// What the order commands expect.
    static func ofOrders() throws -> [InteractionSpec] {
        [try placeOrder(), try listOrders(), try getOrder(), try cancelOrder()]
    }
}
