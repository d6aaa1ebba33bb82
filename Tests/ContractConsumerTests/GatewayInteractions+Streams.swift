import ContractTesting
import Contracts
import RPC
import JSON

/// The streaming methods the gateway passes through, message by message: WatchAuthState and
/// WatchBasket (server streams: the gateway relays each message as it comes and cancels
/// upstream when its client does) and ImportProducts (a client stream: each message relayed
/// up, then the one answer down).
extension GatewayInteractions {
    /// WatchAuthState, routed: signed in, then signed out once the session is revoked, which
    /// ends the stream.
    static func watchAuthState() throws -> InteractionSpec {
        InteractionSpec(
            "WatchAuthState until the session is signed out, passed through",
            given: [ProviderState("a signed-in user", ["email": .string(email)])], path: AuthContract.watchAuthState.path,
            metadata: callerMetadata, generators: callerGenerators,
            response: .stream(
                [
                    try StreamedMessage(
                        encoding: WatchAuthStateResponse(state: .signedIn, user: user),
                        rules: ["$": Matcher.type.allowingExtraFields, "$.state": .equality].merging(userRules(at: "$.user")) {
                            $1
                        }),
                    try StreamedMessage(
                        encoding: WatchAuthStateResponse(state: .signedOut),
                        rules: ["$": Matcher.type.allowingExtraFields, "$.state": .equality],
                        after: ProviderState("the user signs out everywhere", ["email": .string(email)])),
                ], then: .ok))
    }

    /// The products an admin imports: the rain jacket and a thermos, both new.
    static let importedProducts = [
        newProduct,
        Product(
            title: "Steel Thermos", description: "Keeps tea hot for twelve hours.", category: "kitchen",
            price: Money(amount: 2900, currency: "USD"), image: "https://images.storefront.example/products/thermos.jpg",
            rating: Rating(rate: 0, count: 0), stock: 40),
    ]

    /// ImportProducts, routed with the admin key: every message of the client's stream.
    static func importProducts() throws -> InteractionSpec {
        InteractionSpec(
            "ImportProducts with the admin key, passed through", path: CatalogContract.importProducts.path,
            metadata: requestIDMetadata.merging([MetadataKey.apiKey: .regex(Matcher.Pattern.nonEmpty)]) { $1 },
            generators: Generators(metadata: [MetadataKey.apiKey: "${adminKey}"]),
            response: try .message(
                encoding: ImportProductsResponse(created: 2, updated: 0, failed: []),
                rules: [
                    "$": Matcher.type.allowingExtraFields, "$.created": .equality, "$.updated": .equality,
                    "$.failed": .equality,
                ]))
    }

    /// WatchBasket, routed: the basket, then the basket after another device added the lamp;
    /// the stream stays open until the client cancels.
    static func watchBasket() throws -> InteractionSpec {
        InteractionSpec(
            "WatchBasket through a change, passed through", given: try BasketInteractions.states(holding: pageBasket),
            path: BasketContract.watchBasket.path, metadata: callerMetadata, generators: callerGenerators,
            response: try BasketInteractions.watchedWhileLampIsAdded(owner: ["userId": .string(userID)]))
    }
}
