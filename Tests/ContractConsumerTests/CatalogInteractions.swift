import ContractTesting
import Contracts
import RPC
import JSON

/// What basket-svc and order-svc expect of catalog-svc, as interactions of their contracts.
enum CatalogInteractions {
    /// A product as the catalog holds it in the provider state "a product exists".
    static let backpack = Product(
        id: 7, title: "Everyday Backpack", description: "Fits a 15-inch laptop.", category: "bags",
        price: Money(amount: 4999, currency: "USD"), image: "https://images.storefront.example/products/7.jpg",
        rating: Rating(rate: 4.5, count: 120), stock: 20)
    /// A second product, for baskets of two lines.
    static let lamp = Product(
        id: 12, title: "Desk Lamp", description: "Warm light, three levels.", category: "home",
        price: Money(amount: 2500, currency: "USD"), image: "https://images.storefront.example/products/12.jpg",
        rating: Rating(rate: 4.0, count: 33), stock: 5)
    /// A product id the catalog does not have.
    static let missingID = 999

    /// The response matchers for messages carrying products: any values of the right types,
    /// new fields welcome, but the ids exactly as asked.
    static let productRules: [String: Matcher] = ["$": Matcher.type.allowingExtraFields]

    /// "a product exists" for `product`.
    static func exists(_ product: Product) throws -> ProviderState {
        try ProviderState("a product exists", encoding: product)
    }

    /// GetProduct of a product the catalog has (basket-svc's AddItem).
    static func getProduct() throws -> InteractionSpec {
        InteractionSpec(
            "GetProduct of a product in the catalog", given: [try exists(backpack)], path: CatalogContract.getProduct.path,
            metadata: [MetadataKey.requestID: .regex(Matcher.Pattern.nonEmpty)],
            response: try .message(
                encoding: ProductResponse(product: backpack), rules: productRules.merging(["$.product.id": .equality]) { $1 }))
    }

    /// GetProduct of a product with little stock (basket-svc's AddItem and UpdateItemCount
    /// refuse counts above it): the stock must be an integer, as basket-svc compares counts with it.
    static func getScarceProduct() throws -> InteractionSpec {
        InteractionSpec(
            "GetProduct of a product with little stock", given: [try exists(lamp)], path: CatalogContract.getProduct.path,
            metadata: [MetadataKey.requestID: .regex(Matcher.Pattern.nonEmpty)],
            response: try .message(
                encoding: ProductResponse(product: lamp),
                rules: productRules.merging(["$.product.id": .equality, "$.product.stock": .integer]) { $1 }))
    }

    /// GetProduct of an id the catalog does not have.
    static func getMissingProduct() -> InteractionSpec {
        InteractionSpec(
            "GetProduct of a product the catalog does not have",
            given: [ProviderState("no product has the id", ["id": .number(Double(missingID))])],
            path: CatalogContract.getProduct.path, metadata: [MetadataKey.requestID: .regex(Matcher.Pattern.nonEmpty)],
            response: .status(CatalogReason.productNotFound))
    }

    /// BatchGetProducts of a basket's products (order-svc re-pricing).
    static func batchGetProducts() throws -> InteractionSpec {
        InteractionSpec(
            "BatchGetProducts of the products in the basket", given: [try exists(backpack), try exists(lamp)],
            path: CatalogContract.batchGetProducts.path,
            metadata: [
                MetadataKey.requestID: .regex(Matcher.Pattern.nonEmpty),
                MetadataKey.authorization: .regex(Matcher.Pattern.bearerToken),
            ],
            response: try .message(
                encoding: BatchGetProductsResponse(products: [backpack, lamp], missingIds: []),
                rules: productRules.merging([
                    "$.products": .type(minItems: 2), "$.products[*].id": .equality, "$.missingIds": .equality,
                ]) { $1 }))
    }

    /// The metadata order-svc sends with its stock calls: its internal key.
    static let stockMetadata: [String: Matcher] = [MetadataKey.apiKey: .regex(Matcher.Pattern.nonEmpty)]
    /// The provider fills the key in with its own.
    static let stockGenerators = Generators(metadata: [MetadataKey.apiKey: "${internalKey}"])

    /// ReserveStock for a new order, with the stock there.
    static func reserveStock() throws -> InteractionSpec {
        InteractionSpec(
            "ReserveStock for an order the stock covers", given: [try exists(backpack), try exists(lamp)],
            path: CatalogContract.reserveStock.path, metadata: stockMetadata,
            messageRules: ["$.reservationId": .regex(Matcher.Pattern.uuid)], generators: stockGenerators,
            response: .message(.object([:]), rules: [:]))
    }

    /// ReserveStock beyond the stock.
    static func reserveStockOutOfStock() throws -> InteractionSpec {
        var scarce = backpack
        scarce.stock = 1
        return InteractionSpec(
            "ReserveStock for more than is in stock", given: [try exists(scarce), try exists(lamp)],
            path: CatalogContract.reserveStock.path, metadata: stockMetadata,
            messageRules: ["$.reservationId": .regex(Matcher.Pattern.uuid)], generators: stockGenerators,
            response: .status(CatalogReason.outOfStock))
    }

    /// The reservation the provider state "a reservation exists" makes.
    static let reservationID = "0b7f5c1e-2a44-4d8e-9d7c-3f1a6e2b9c10"

    /// ReleaseStock of an order's reservation (after a declined payment).
    static func releaseStock() throws -> InteractionSpec {
        InteractionSpec(
            "ReleaseStock of an order's reservation",
            given: [
                try exists(backpack), try exists(lamp),
                try ProviderState(
                    "a reservation exists",
                    encoding: ReserveStockRequest(
                        reservationId: reservationID,
                        items: [StockReservationItem(productId: 7, count: 2), StockReservationItem(productId: 12, count: 1)])),
            ],
            path: CatalogContract.releaseStock.path, metadata: stockMetadata,
            messageRules: ["$.reservationId": .regex(Matcher.Pattern.uuid)],
            generators: Generators(
                metadata: stockGenerators.metadata, message: ["$.reservationId": "${reservationId}"]),
            response: .message(.object([:]), rules: [:]))
    }

    /// basket-svc's contract with catalog-svc.
    static func ofBasket() throws -> [InteractionSpec] { [try getProduct(), try getScarceProduct(), getMissingProduct()] }

    /// order-svc's contract with catalog-svc.
    static func ofOrder() throws -> [InteractionSpec] {
        [try batchGetProducts(), try reserveStock(), try reserveStockOutOfStock(), try releaseStock()]
    }
}
