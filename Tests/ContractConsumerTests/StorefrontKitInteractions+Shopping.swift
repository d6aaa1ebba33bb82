import ContractTesting
import Contracts
import RPC
import JSON

/// What StorefrontKit's `catalog` and `orders` surfaces expect of the gateway where shopctl
/// has no such call: search, a batch of products, the composed screens (`GetProductPage`,
/// `GetHome`), and the refusals an app branches on.
extension StorefrontKitInteractions {
    /// The account, products and orders of shopctl's expectations.
    typealias Gateway = ShopctlInteractions

    /// The words `catalog.search` looks for: both are in the backpack's title, and no product
    /// of the seed catalog has both, so the backpack is the only match.
    static let searchQuery = "everyday backpack"

    // MARK: Catalog

    /// `catalog.search`'s first page: the backpack matches.
    static func searchProducts() throws -> InteractionSpec {
        InteractionSpec(
            "ListProducts with a query for catalog.search", given: [try Gateway.backpackExists()],
            path: CatalogContract.listProducts.path,
            response: try .message(
                encoding: ListProductsResponse(products: [Gateway.backpack], nextPageToken: "", totalSize: 1),
                rules: CatalogInteractions.productRules.merging([
                    "$.products": .type(minItems: 1), "$.products[*].id": .equality,
                ]) { $1 }))
    }

    /// `catalog.products(ids:)` of the backpack and an id the catalog does not have.
    static func batchGetProducts() throws -> InteractionSpec {
        InteractionSpec(
            "BatchGetProducts for catalog.products(ids:)",
            given: [
                try Gateway.backpackExists(),
                ProviderState("no product has the id", ["id": .number(Double(CatalogInteractions.missingID))]),
            ],
            path: CatalogContract.batchGetProducts.path,
            response: try .message(
                encoding: BatchGetProductsResponse(products: [Gateway.backpack], missingIds: [CatalogInteractions.missingID]),
                rules: CatalogInteractions.productRules.merging([
                    "$.products": .type(minItems: 1), "$.products[*].id": .equality, "$.missingIds": .equality,
                ]) { $1 }))
    }

    /// `catalog.product(id:)` of an id the catalog does not have.
    static func productNotFound() -> InteractionSpec {
        InteractionSpec(
            "GetProduct of a missing product for catalog.product(id:)",
            given: [ProviderState("no product has the id", ["id": .number(Double(CatalogInteractions.missingID))])],
            path: CatalogContract.getProduct.path, response: .status(CatalogReason.productNotFound))
    }

    /// The product page as a signed-out shopper sees it: no favorite flag, no basket line.
    static func productPageSignedOut() throws -> InteractionSpec {
        InteractionSpec(
            "GetProductPage signed out for catalog.productPage", given: [try Gateway.backpackExists()],
            path: StorefrontContract.getProductPage.path,
            response: try .message(
                encoding: GetProductPageResponse(product: Gateway.backpack),
                rules: CatalogInteractions.productRules.merging(["$.product.id": .equality, "$.isFavorite": .equality]) { $1 }))
    }

    /// The product page of a signed-in user who favors the backpack and has it in the basket.
    static func productPageSignedIn() throws -> InteractionSpec {
        InteractionSpec(
            "GetProductPage signed in for catalog.productPage",
            given: [
                try Gateway.backpackExists(), Gateway.signedIn, Gateway.favorsBackpack, try Gateway.basketHolds([Gateway.backpackLine]),
            ],
            path: StorefrontContract.getProductPage.path, metadata: Gateway.userMetadata, generators: Gateway.userGenerators,
            response: try .message(
                encoding: GetProductPageResponse(product: Gateway.backpack, isFavorite: true, basketItem: Gateway.backpackLine),
                rules: CatalogInteractions.productRules.merging([
                    "$.product.id": .equality, "$.isFavorite": .equality, "$.basketItem.productId": .equality,
                    "$.basketItem.count": .equality,
                ]) { $1 }))
    }

    /// The home screen of a signed-in user with the backpack in the basket.
    static func home() throws -> InteractionSpec {
        InteractionSpec(
            "GetHome signed in for catalog.home",
            given: [try Gateway.backpackExists(), Gateway.signedIn, try Gateway.basketHolds([Gateway.backpackLine])],
            path: StorefrontContract.getHome.path, metadata: Gateway.userMetadata, generators: Gateway.userGenerators,
            response: try .message(
                encoding: GetHomeResponse(
                    categories: [Category(name: Gateway.backpack.category, productCount: 1)], products: [Gateway.backpack],
                    nextPageToken: "", basketItemCount: Gateway.backpackLine.count),
                rules: CatalogInteractions.productRules.merging([
                    "$.categories": .type(minItems: 1), "$.products": .type(minItems: 1), "$.basketItemCount": .equality,
                ]) { $1 }))
    }

    // MARK: Orders

    /// `orders.place` with nothing in the basket.
    static func placeOrderWithEmptyBasket() -> InteractionSpec {
        InteractionSpec(
            "PlaceOrder with an empty basket for orders.place", given: [Gateway.signedIn], path: OrderContract.placeOrder.path,
            metadata: Gateway.userMetadata.merging([MetadataKey.idempotencyKey: .regex(Matcher.Pattern.uuid)]) { $1 },
            generators: Gateway.userGenerators, response: .status(OrderReason.emptyBasket))
    }

    /// An order already cancelled, which cannot be cancelled again.
    static var cancelledOrder: Order {
        var order = Gateway.paidOrder
        order.status = .cancelled
        return order
    }

    /// `orders.cancel(id:)` of an order already cancelled.
    static func cancelCancelledOrder() throws -> InteractionSpec {
        InteractionSpec(
            "CancelOrder of a cancelled order for orders.cancel(id:)",
            given: [
                Gateway.signedIn,
                ProviderState("the user has an order", ["email": .string(Gateway.email), "order": try JSONValue(encoding: cancelledOrder)]),
            ],
            path: OrderContract.cancelOrder.path, metadata: Gateway.userMetadata, generators: Gateway.userGenerators,
            response: .status(OrderReason.orderNotCancellable))
    }
}
