import ContractTesting
import Contracts
import RPC
import JSON

/// What order-svc expects of basket-svc: the caller's basket to order, and clearing it once paid.
enum BasketInteractions {
    /// The user the tests sign in as.
    static let userID = "contract-user-1"

    /// The basket of "the user's basket holds": the backpack twice and the lamp once, version 2.
    static let twoLines = Basket(
        items: [
            line(id: "3f0c8f8e-8d3b-4b8e-b7a5-0f7f1f2c6a01", CatalogInteractions.backpack, count: 2),
            line(id: "9a4d7c21-5e6f-4a3b-8c2d-1e0f9b8a7c02", CatalogInteractions.lamp, count: 1),
        ],
        itemCount: 3, total: Money(amount: 2 * 4999 + 2500, currency: "USD"), version: 2,
        updatedAt: "2026-11-22T01:41:17.250Z")

    /// `twoLines` before the lamp was added: the backpack's line alone, version 1.
    static let oneLine = Basket(
        items: [twoLines.items[0]], itemCount: 2, total: twoLines.items[0].lineTotal, version: 1,
        updatedAt: "2026-11-22T01:41:17.250Z")

    /// A basket line for `product`.
    static func line(id: String, _ product: Product, count: Int) -> BasketItem {
        BasketItem(
            id: id, productId: product.id, productTitle: product.title, unitPrice: product.price, imageURL: product.image,
            count: count, lineTotal: product.price.multiplied(by: count))
    }

    /// The provider states: a signed-in user (whose token the provider mints) with `basket`'s lines.
    static func states(holding basket: Basket) throws -> [ProviderState] {
        [
            ProviderState("a signed-in user", ["userId": .string(userID)]),
            ProviderState(
                "the user's basket holds",
                ["userId": .string(userID), "items": try JSONValue(encoding: basket.items)]),
        ]
    }

    /// The metadata order-svc forwards: the caller's token (minted afresh by the provider) and request id.
    static let callerMetadata: [String: Matcher] = [
        MetadataKey.authorization: .regex(Matcher.Pattern.bearerToken),
        MetadataKey.requestID: .regex(Matcher.Pattern.nonEmpty),
    ]
    /// The provider mints the token for its state's user.
    static let callerGenerators = Generators(metadata: [MetadataKey.authorization: "Bearer ${accessToken}"])

    /// The matchers of a basket answer: shapes by type, lines by product and count.
    static let basketRules: [String: Matcher] = [
        "$": Matcher.type.allowingExtraFields, "$.items[*].id": .regex(Matcher.Pattern.uuid),
        "$.items[*].productId": .equality, "$.items[*].count": .equality, "$.version": .integer,
        "$.updatedAt": .regex(Matcher.Pattern.timestamp),
    ]

    /// The matchers of a basket answer with at least `minimum` lines, its item count exactly.
    static func countedRules(minItems minimum: Int) -> [String: Matcher] {
        basketRules.merging(["$.items": .type(minItems: minimum), "$.itemCount": .equality]) { $1 }
    }

    /// WatchBasket's answer while another device adds the lamp: `oneLine`, then `twoLines` once
    /// the provider has added it for the user `owner` names (by id, or by email behind the
    /// gateway); the stream stays open until the client cancels.
    static func watchedWhileLampIsAdded(owner: [String: JSONValue]) throws -> ResponseExpectation {
        let lampAdded = ProviderState(
            "a product is added to the user's basket",
            owner.merging(["item": try JSONValue(encoding: twoLines.items[1])]) { $1 })
        return .stream(
            [
                try StreamedMessage(encoding: oneLine, rules: countedRules(minItems: 1)),
                try StreamedMessage(encoding: twoLines, rules: countedRules(minItems: 2), after: lampAdded),
            ], then: .open)
    }

    /// GetBasket of a basket with two lines (PlaceOrder's first step).
    static func getBasket() throws -> InteractionSpec {
        InteractionSpec(
            "GetBasket of a basket with two lines", given: try states(holding: twoLines), path: BasketContract.getBasket.path,
            metadata: callerMetadata, generators: callerGenerators,
            response: try .message(encoding: twoLines, rules: basketRules.merging(["$.items": .type(minItems: 2)]) { $1 }))
    }

    /// GetBasket of a user who never added anything.
    static func getEmptyBasket() throws -> InteractionSpec {
        InteractionSpec(
            "GetBasket of an empty basket", given: [ProviderState("a signed-in user", ["userId": .string(userID)])],
            path: BasketContract.getBasket.path, metadata: callerMetadata, generators: callerGenerators,
            response: try .message(
                encoding: Basket(
                    items: [], itemCount: 0, total: .zero(currency: "USD"), version: 0, updatedAt: "1970-01-01T00:00:00.000Z"),
                rules: ["$": Matcher.type.allowingExtraFields, "$.items": .equality, "$.itemCount": .equality]))
    }

    /// ClearBasket at the version the order was priced from (PlaceOrder's last step).
    static func clearBasket() throws -> InteractionSpec {
        var cleared = twoLines
        cleared.items = []
        cleared.itemCount = 0
        cleared.total = .zero(currency: "USD")
        cleared.version = 3
        return InteractionSpec(
            "ClearBasket at the version the order was priced from", given: try states(holding: twoLines),
            path: BasketContract.clearBasket.path, metadata: callerMetadata, generators: callerGenerators,
            response: try .message(encoding: cleared, rules: basketRules.merging(["$.items": .equality]) { $1 }))
    }

    /// order-svc's contract with basket-svc.
    static func ofOrder() throws -> [InteractionSpec] { [try getBasket(), try getEmptyBasket(), try clearBasket()] }
}
