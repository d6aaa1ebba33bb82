import ContractTesting
import Contracts
import RPC
import JSON

/// What the gateway expects of each service: the calls it composes its screens from
/// (`GetProductPage`, `GetHome`) and, for routed methods, the client's call passed through
/// unchanged with the client's metadata (authorization, `x-api-key`, `idempotency-key`) and
/// the call's `x-request-id`. Its auth-svc contract also holds the keys and the revocation
/// feed, like every service's.
enum GatewayInteractions {
    /// The user the gateway tests sign in as.
    static let userID = BasketInteractions.userID
    /// The provider state of a signed-in user, whose token the provider mints.
    static let signedIn = ProviderState("a signed-in user", ["userId": .string(userID)])

    /// The caller's token and the request id.
    static let callerMetadata = BasketInteractions.callerMetadata
    /// The provider mints the token for its state's user.
    static let callerGenerators = BasketInteractions.callerGenerators
    /// The request id alone, for anonymous calls.
    static let requestIDMetadata: [String: Matcher] = [MetadataKey.requestID: .regex(Matcher.Pattern.nonEmpty)]

    // MARK: auth-svc

    /// The email of "a user with a password".
    static let email = "ada@example.com"
    /// Its password.
    static let password = "correct horse battery staple"

    /// An auth-svc user as the examples show it.
    static let user = User(
        id: "2d7f3a9c-0b1e-4c5d-8e6f-7a8b9c0d1e2f", email: email, emailVerified: true, displayName: "Ada",
        providers: ["password"], createdAt: "2026-11-22T01:41:17Z")

    /// The matchers of a `User` at `path`: any values of the right types, the email as given.
    static func userRules(at path: String) -> [String: Matcher] {
        ["\(path).email": .equality, "\(path).createdAt": .regex(Matcher.Pattern.timestamp)]
    }

    /// SignIn, routed.
    static func signIn() throws -> InteractionSpec {
        InteractionSpec(
            "SignIn of a verified user, passed through",
            given: [ProviderState("a user with a password", ["email": .string(email), "password": .string(password)])],
            path: AuthContract.signIn.path, metadata: requestIDMetadata,
            response: try .message(
                encoding: Session(
                    accessToken: "eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl", refreshToken: "opaque-refresh-token",
                    expiresIn: 900, user: user),
                rules: [
                    "$": Matcher.type.allowingExtraFields, "$.accessToken": .regex(Matcher.Pattern.jws),
                    "$.tokenType": .equality, "$.expiresIn": .integer,
                ].merging(userRules(at: "$.user")) { $1 }))
    }

    /// GetCurrentUser, routed with the caller's token.
    static func getCurrentUser() throws -> InteractionSpec {
        InteractionSpec(
            "GetCurrentUser of the signed-in user, passed through",
            given: [ProviderState("a signed-in user", ["email": .string(email)])], path: AuthContract.getCurrentUser.path,
            metadata: callerMetadata, generators: callerGenerators,
            response: try .message(
                encoding: UserResponse(user: user),
                rules: ["$": Matcher.type.allowingExtraFields].merging(userRules(at: "$.user")) { $1 }))
    }

    /// The gateway's contract with auth-svc.
    static func ofAuth() throws -> [InteractionSpec] {
        try AuthInteractions.all() + [try signIn(), try getCurrentUser(), try watchAuthState()]
    }

    // MARK: catalog-svc

    /// GetProduct for a signed-in caller's product page.
    static func getProductForPage() throws -> InteractionSpec {
        InteractionSpec(
            "GetProduct for a signed-in product page", given: [try CatalogInteractions.exists(CatalogInteractions.backpack), signedIn],
            path: CatalogContract.getProduct.path, metadata: callerMetadata, generators: callerGenerators,
            response: try .message(
                encoding: ProductResponse(product: CatalogInteractions.backpack),
                rules: CatalogInteractions.productRules.merging(["$.product.id": .equality]) { $1 }))
    }

    /// ListFavorites for a product page: the caller favors the product.
    static func listFavorites() throws -> InteractionSpec {
        InteractionSpec(
            "ListFavorites of a user who favors the product",
            given: [
                try CatalogInteractions.exists(CatalogInteractions.backpack), signedIn,
                ProviderState(
                    "the user favors a product",
                    ["userId": .string(userID), "productId": .number(Double(CatalogInteractions.backpack.id))]),
            ],
            path: CatalogContract.listFavorites.path, metadata: callerMetadata, generators: callerGenerators,
            response: try .message(
                encoding: ListFavoritesResponse(products: [CatalogInteractions.backpack], nextPageToken: ""),
                rules: CatalogInteractions.productRules.merging([
                    "$.products": .type(minItems: 1), "$.products[*].id": .equality,
                ]) { $1 }))
    }

    /// ListCategories for the home screen.
    static func listCategories() throws -> InteractionSpec {
        InteractionSpec(
            "ListCategories for the home screen", given: [try CatalogInteractions.exists(CatalogInteractions.backpack)],
            path: CatalogContract.listCategories.path, metadata: requestIDMetadata,
            response: try .message(
                encoding: ListCategoriesResponse(categories: [Category(name: "bags", productCount: 1)]),
                rules: ["$": Matcher.type.allowingExtraFields, "$.categories": .type(minItems: 1)]))
    }

    /// ListProducts for the home screen: the first page of every category.
    static func listProducts() throws -> InteractionSpec {
        InteractionSpec(
            "ListProducts for the home screen", given: [try CatalogInteractions.exists(CatalogInteractions.backpack)],
            path: CatalogContract.listProducts.path, metadata: requestIDMetadata,
            response: try .message(
                encoding: ListProductsResponse(products: [CatalogInteractions.backpack], nextPageToken: "next-page-token", totalSize: 1),
                rules: ["$": Matcher.type.allowingExtraFields, "$.products": .type(minItems: 1)]))
    }

    /// A product an admin creates.
    static let newProduct = Product(
        title: "Rain Jacket", description: "Packs into its own pocket.", category: "clothing",
        price: Money(amount: 8900, currency: "USD"), image: "https://images.storefront.example/products/new.jpg",
        rating: Rating(rate: 0, count: 0), stock: 15)

    /// UpsertProduct, routed with the admin key.
    static func upsertProduct() throws -> InteractionSpec {
        var created = newProduct
        created.id = 101
        return InteractionSpec(
            "UpsertProduct with the admin key, passed through", path: CatalogContract.upsertProduct.path,
            metadata: requestIDMetadata.merging([MetadataKey.apiKey: .regex(Matcher.Pattern.nonEmpty)]) { $1 },
            generators: Generators(metadata: [MetadataKey.apiKey: "${adminKey}"]),
            response: try .message(
                encoding: ProductResponse(product: created),
                rules: CatalogInteractions.productRules.merging([
                    "$.product.id": .integer, "$.product.title": .equality,
                ]) { $1 }))
    }

    /// The gateway's contract with catalog-svc.
    static func ofCatalog() throws -> [InteractionSpec] {
        [
            try getProductForPage(), try listFavorites(), try listCategories(), try listProducts(), try upsertProduct(),
            try importProducts(),
        ]
    }

    // MARK: basket-svc

    /// The basket of a product page: the backpack twice.
    static let pageBasket = BasketInteractions.oneLine

    /// GetBasket for a signed-in product page.
    static func getBasketForPage() throws -> InteractionSpec {
        InteractionSpec(
            "GetBasket for a signed-in product page", given: try BasketInteractions.states(holding: pageBasket),
            path: BasketContract.getBasket.path, metadata: callerMetadata, generators: callerGenerators,
            response: try .message(
                encoding: pageBasket, rules: BasketInteractions.basketRules.merging(["$.items": .type(minItems: 1)]) { $1 }))
    }

    /// AddItem, routed with the caller's token.
    static func addItem() throws -> InteractionSpec {
        let added = Basket(
            items: [BasketInteractions.line(id: "5e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b", CatalogInteractions.backpack, count: 1)],
            itemCount: 1, total: CatalogInteractions.backpack.price, version: 1, updatedAt: "2026-11-22T01:41:17.250Z")
        return InteractionSpec(
            "AddItem of a product in the catalog, passed through", given: [signedIn], path: BasketContract.addItem.path,
            metadata: callerMetadata, generators: callerGenerators,
            response: try .message(
                encoding: added, rules: BasketInteractions.basketRules.merging(["$.items": .type(minItems: 1)]) { $1 }))
    }

    /// The gateway's contract with basket-svc.
    static func ofBasket() throws -> [InteractionSpec] { [try getBasketForPage(), try addItem(), try watchBasket()] }

    // MARK: order-svc

    /// PlaceOrder, routed with the caller's token and idempotency key.
    static func placeOrder() throws -> InteractionSpec {
        let lines = BasketInteractions.twoLines.items.map {
            OrderItem(productId: $0.productId, productTitle: $0.productTitle, unitPrice: $0.unitPrice, count: $0.count, lineTotal: $0.lineTotal)
        }
        let order = Order(
            id: "7c9e6679-7425-40de-944b-e07fc1f90ae7", status: .paid, items: lines, total: BasketInteractions.twoLines.total,
            shippingAddress: OrderConsumerLiveTests.order().shippingAddress, payment: PaymentSummary(brand: "visa", last4: "4242"),
            createdAt: "2026-11-22T01:41:17Z", updatedAt: "2026-11-22T01:41:18Z")
        return InteractionSpec(
            "PlaceOrder with an idempotency key, passed through", given: [signedIn], path: OrderContract.placeOrder.path,
            metadata: callerMetadata.merging([MetadataKey.idempotencyKey: .regex(Matcher.Pattern.nonEmpty)]) { $1 },
            generators: callerGenerators,
            response: try .message(
                encoding: order,
                rules: [
                    "$": Matcher.type.allowingExtraFields, "$.id": .regex(Matcher.Pattern.uuid), "$.status": .equality,
                    "$.items": .type(minItems: 1), "$.createdAt": .regex(Matcher.Pattern.timestamp),
                    "$.updatedAt": .regex(Matcher.Pattern.timestamp),
                ]))
    }

    /// The order id nobody has.
    static let unknownOrderID = "00000000-0000-4000-8000-000000000000"

    /// GetOrder of an order the caller does not have, routed.
    static func getMissingOrder() -> InteractionSpec {
        InteractionSpec(
            "GetOrder of an order the user does not have, passed through", given: [signedIn],
            path: OrderContract.getOrder.path, metadata: callerMetadata, generators: callerGenerators,
            response: .status(OrderReason.orderNotFound))
    }

    /// The gateway's contract with order-svc.
    static func ofOrder() throws -> [InteractionSpec] { [try placeOrder(), getMissingOrder()] }
}
