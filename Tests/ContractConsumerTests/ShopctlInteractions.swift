import ContractTesting
import Contracts
import RPC
import JSON

/// What shopctl's commands expect of the gateway, one interaction per call a command makes:
/// the catalog here, accounts in `ShopctlInteractions+Auth`, favorites, basket and orders in
/// `+Shopping`, administration, health and Describe in `+Admin`.
///
/// The provider states are the gateway's (`Tests/ContractProviderTests/GatewayProvider+States.swift`),
/// set up in the real services behind it; users are named by email there, since auth-svc
/// picks their ids.
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

    /// What the catalog commands expect.
    static func ofCatalog() throws -> [InteractionSpec] { [try showProduct(), try listProducts(), try listCategories()] }

    /// shopctl's contract with the gateway.
    static func all() throws -> [InteractionSpec] {
        try ofCatalog() + ofAuth() + ofSession() + ofFavorites() + ofBasket() + ofOrders() + ofAdmin() + ofProcess()
    }

    // MARK: Signed-in calls

    /// The account the signed-in commands act for.
    static let email = GatewayInteractions.email
    /// Its password.
    static let password = GatewayInteractions.password
    /// The provider state of a user signed in with `email`: the provider signs its tokens.
    static let signedIn = ProviderState("a signed-in user", ["email": .string(email)])
    /// The provider state of an account with `email` and `password`.
    static let hasPassword = ProviderState(
        "a user with a password", ["email": .string(email), "password": .string(password)])

    /// What a signed-in command sends: the stored access token.
    static let userMetadata: [String: Matcher] = [MetadataKey.authorization: .regex(Matcher.Pattern.bearerToken)]
    /// The provider signs a token for its signed-in user.
    static let userGenerators = Generators(metadata: [MetadataKey.authorization: "Bearer ${accessToken}"])

    /// An answer of `{}` (shopctl relies on nothing in it).
    static func empty() throws -> ResponseExpectation {
        try .message(encoding: Empty(), rules: ["$": Matcher.type.allowingExtraFields])
    }
}
