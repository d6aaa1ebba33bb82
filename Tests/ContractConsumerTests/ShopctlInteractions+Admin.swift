import ContractTesting
import Contracts
import RPC

/// What `shopctl admin products …`, `health` and `describe` expect of the gateway.
extension ShopctlInteractions {
    /// What an admin command sends: the admin key (`SHOP_ADMIN_API_KEY`); the provider fills
    /// in its own.
    static let adminMetadata: [String: Matcher] = [MetadataKey.apiKey: .regex(Matcher.Pattern.nonEmpty)]
    /// The provider's admin key.
    static let adminGenerators = Generators(metadata: [MetadataKey.apiKey: "${adminKey}"])

    /// The product `admin products upsert` creates, and the first one `import` creates.
    static let rainJacket = GatewayInteractions.newProduct
    /// The second product `admin products import` creates.
    static let thermos = GatewayInteractions.importedProducts[1]

    /// `admin products upsert --title … --category … --price …` (a new product).
    static func upsertProduct() throws -> InteractionSpec {
        var created = rainJacket
        created.id = 101
        return InteractionSpec(
            "UpsertProduct for admin products upsert", path: CatalogContract.upsertProduct.path, metadata: adminMetadata,
            generators: adminGenerators,
            response: try .message(
                encoding: ProductResponse(product: created),
                rules: CatalogInteractions.productRules.merging(["$.product.id": .integer, "$.product.title": .equality]) {
                    $1
                }))
    }

    /// `admin products delete 7`.
    static func deleteProduct() throws -> InteractionSpec {
        InteractionSpec(
            "DeleteProduct for admin products delete", given: [try backpackExists()], path: CatalogContract.deleteProduct.path,
            metadata: adminMetadata, generators: adminGenerators, response: try empty())
    }

    /// `admin products import FILE`: a client stream of one message per product in the file.
    static func importProducts() throws -> InteractionSpec {
        InteractionSpec(
            "ImportProducts for admin products import", path: CatalogContract.importProducts.path, metadata: adminMetadata,
            generators: adminGenerators,
            response: try .message(
                encoding: ImportProductsResponse(created: 2, updated: 0, failed: []),
                rules: [
                    "$": Matcher.type.allowingExtraFields, "$.created": .equality, "$.updated": .equality,
                    "$.failed": .equality,
                ]))
    }

    /// What the admin commands expect.
    static func ofAdmin() throws -> [InteractionSpec] { [try upsertProduct(), try deleteProduct(), try importProducts()] }

    /// `health`: the gateway as a whole, serving.
    static func health() throws -> InteractionSpec {
        InteractionSpec(
            "Health Check for health", given: [ProviderState("every service behind the gateway is serving")],
            path: HealthContract.check.path,
            response: try .message(
                encoding: HealthCheckResponse(status: .serving),
                rules: ["$": Matcher.type.allowingExtraFields, "$.status": .equality]))
    }

    /// `describe`: the services the gateway serves, each with its methods.
    static func describe() throws -> InteractionSpec {
        InteractionSpec(
            "Describe for describe", path: MetaContract.describe.path,
            response: try .message(
                encoding: DescribeResponse(services: [
                    ServiceDescription(
                        name: CatalogContract.service, methods: [MethodDescription(CatalogContract.getProduct.info)])
                ]),
                rules: [
                    "$": Matcher.type.allowingExtraFields, "$.services": .type(minItems: 1),
                    // Each method like the example's, its field lists of any length (the minimum stops here).
                    "$.services[*].methods[*]": .type,
                ]))
    }

    /// What `health` and `describe` expect.
    static func ofProcess() throws -> [InteractionSpec] { [try health(), try describe()] }
}
