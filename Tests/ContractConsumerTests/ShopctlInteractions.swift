import ContractTesting
import Contracts
import RPC

/// What shopctl's catalog commands expect of the gateway.
enum ShopctlInteractions {
    /// `shopctl products show 7`.
    static func showProduct() throws -> InteractionSpec {
        InteractionSpec(
            "GetProduct for products show", given: [try CatalogInteractions.exists(CatalogInteractions.backpack)],
            path: CatalogContract.getProduct.path,
            response: try .message(
                encoding: ProductResponse(product: CatalogInteractions.backpack),
                rules: CatalogInteractions.productRules.merging(["$.product.id": .equality]) { $1 }))
    }

    /// `shopctl products list --category bags --page-size 5`.
    static func listProducts() throws -> InteractionSpec {
        InteractionSpec(
            "ListProducts for products list in a category", given: [try CatalogInteractions.exists(CatalogInteractions.backpack)],
            path: CatalogContract.listProducts.path,
            response: try .message(
                encoding: ListProductsResponse(products: [CatalogInteractions.backpack], nextPageToken: "", totalSize: 1),
                rules: CatalogInteractions.productRules.merging([
                    "$.products": .type(minItems: 1), "$.products[*].category": .equality,
                ]) { $1 }))
    }

    /// `shopctl categories`.
    static func listCategories() throws -> InteractionSpec {
        InteractionSpec(
            "ListCategories for categories", given: [try CatalogInteractions.exists(CatalogInteractions.backpack)],
            path: CatalogContract.listCategories.path,
            response: try .message(
                encoding: ListCategoriesResponse(categories: [Category(name: "bags", productCount: 1)]),
                rules: ["$": Matcher.type.allowingExtraFields, "$.categories": .type(minItems: 1)]))
    }

    /// shopctl's contract with the gateway.
    static func all() throws -> [InteractionSpec] { [try showProduct(), try listProducts(), try listCategories()] }
}
