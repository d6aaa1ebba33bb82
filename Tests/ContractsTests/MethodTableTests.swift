import Contracts
import RPC
import Testing

/// One row of an API.md method table, with the request and response written as API.md writes them.
struct ExpectedMethod: Sendable, CustomTestStringConvertible {
    let method: String
    let kind: MethodKind
    let auth: AuthLevel
    let idempotent: Bool
    let request: String
    let response: String

    init(_ method: String, _ kind: MethodKind, _ auth: AuthLevel, idempotent: Bool = false, _ request: String, _ response: String) {
        self.method = method
        self.kind = kind
        self.auth = auth
        self.idempotent = idempotent
        self.request = request
        self.response = response
    }

    var testDescription: String { method }
}

/// The method tables of API.md §3–§7, transcribed.
enum ServiceTables {
    static let user = "{id, email, emailVerified, displayName?, providers, createdAt}"
    static let session = "{accessToken, refreshToken, tokenType, expiresIn, user}"
    static let basket = "{items, itemCount, total, version, updatedAt}"
    static let order = "{id, status, items, total, shippingAddress, payment?, createdAt, updatedAt}"

    static let auth: [ExpectedMethod] = [
        ExpectedMethod("SignUp", .unary, .none, "{email, password, displayName?}", "{user}"),
        ExpectedMethod("VerifyEmail", .unary, .none, "{token}", "{user}"),
        ExpectedMethod("ResendVerification", .unary, .none, "{email}", "{}"),
        ExpectedMethod("SignIn", .unary, .none, "{email, password}", session),
        ExpectedMethod("SignInWithIdToken", .unary, .none, "{provider, idToken, rawNonce?}", session),
        ExpectedMethod("RefreshSession", .unary, .none, "{refreshToken}", session),
        ExpectedMethod("SignOut", .unary, .user, "{scope?}", "{}"),
        ExpectedMethod("RequestPasswordReset", .unary, .none, "{email}", "{}"),
        ExpectedMethod("ResetPassword", .unary, .none, "{token, newPassword}", "{}"),
        ExpectedMethod("ChangePassword", .unary, .user, "{currentPassword, newPassword}", session),
        ExpectedMethod("GetCurrentUser", .unary, .user, idempotent: true, "{}", "{user}"),
        ExpectedMethod("UpdateProfile", .unary, .user, "{displayName}", "{user}"),
        ExpectedMethod("DeleteAccount", .unary, .user, "{password?}", "{}"),
        ExpectedMethod("WatchAuthState", .serverStreaming, .user, idempotent: true, "{}", "{state, user?}"),
        ExpectedMethod("GetJwks", .unary, .none, idempotent: true, "{}", "{keys}"),
    ]

    static let catalog: [ExpectedMethod] = [
        ExpectedMethod(
            "ListProducts", .unary, .none, idempotent: true, "{category?, query?, sort?, pageSize?, pageToken?}",
            "{products, nextPageToken, totalSize, suggestion?}"),
        ExpectedMethod("GetProduct", .unary, .none, idempotent: true, "{id}", "{product}"),
        ExpectedMethod("BatchGetProducts", .unary, .none, idempotent: true, "{ids}", "{products, missingIds}"),
        ExpectedMethod("ListCategories", .unary, .none, idempotent: true, "{}", "{categories}"),
        ExpectedMethod("AddFavorite", .unary, .user, idempotent: true, "{productId}", "{}"),
        ExpectedMethod("RemoveFavorite", .unary, .user, idempotent: true, "{productId}", "{}"),
        ExpectedMethod("ListFavorites", .unary, .user, idempotent: true, "{pageSize?, pageToken?}", "{products, nextPageToken}"),
        ExpectedMethod("UpsertProduct", .unary, .admin, "{product}", "{product}"),
        ExpectedMethod("DeleteProduct", .unary, .admin, "{id}", "{}"),
        ExpectedMethod("ImportProducts", .clientStreaming, .admin, "{product}", "{created, updated, failed}"),
        ExpectedMethod("ReserveStock", .unary, .internal, idempotent: true, "{reservationId, items}", "{}"),
        ExpectedMethod("ReleaseStock", .unary, .internal, idempotent: true, "{reservationId}", "{}"),
    ]

    static let basketService: [ExpectedMethod] = [
        ExpectedMethod("GetBasket", .unary, .user, idempotent: true, "{}", basket),
        ExpectedMethod("AddItem", .unary, .user, "{productId, count?}", basket),
        ExpectedMethod("UpdateItemCount", .unary, .user, "{itemId, count, expectedVersion?}", basket),
        ExpectedMethod("RemoveItem", .unary, .user, "{itemId}", basket),
        ExpectedMethod("ClearBasket", .unary, .user, "{expectedVersion?}", basket),
        ExpectedMethod("WatchBasket", .serverStreaming, .user, idempotent: true, "{}", basket),
    ]

    static let orderService: [ExpectedMethod] = [
        ExpectedMethod("PlaceOrder", .unary, .user, "{shippingAddress, payment}", order),
        ExpectedMethod("GetOrder", .unary, .user, idempotent: true, "{id}", order),
        ExpectedMethod("ListOrders", .unary, .user, idempotent: true, "{pageSize?, pageToken?}", "{orders, nextPageToken}"),
        ExpectedMethod("CancelOrder", .unary, .user, "{id}", order),
    ]

    static let storefront: [ExpectedMethod] = [
        ExpectedMethod("GetProductPage", .unary, .optionalUser, idempotent: true, "{productId}", "{product, isFavorite, basketItem?}"),
        ExpectedMethod(
            "GetHome", .unary, .optionalUser, idempotent: true, "{category?, pageSize?}",
            "{categories, products, nextPageToken, basketItemCount}"),
    ]

    /// Each service: its name as API.md writes it, its `all`, and the expected table.
    static let services: [(name: String, methods: [MethodInfo], expected: [ExpectedMethod])] = [
        ("shop.auth.v1.AuthService", AuthContract.all, auth),
        ("shop.catalog.v1.CatalogService", CatalogContract.all, catalog),
        ("shop.basket.v1.BasketService", BasketContract.all, basketService),
        ("shop.order.v1.OrderService", OrderContract.all, orderService),
        ("shop.gateway.v1.StorefrontService", StorefrontContract.all, storefront),
    ]

    static let allMethods = services.flatMap(\.methods)

    /// Renders fields as API.md writes a message: `{name, other?}`.
    static func render(_ fields: [FieldDescriptor]) -> String {
        "{" + fields.map { $0.name + ($0.optional ? "?" : "") }.joined(separator: ", ") + "}"
    }
}

@Suite("Method tables")
struct MethodTableTests {
    @Test("each service lists exactly the methods of its API.md table, in order", arguments: 0..<ServiceTables.services.count)
    func methodNames(index: Int) {
        let service = ServiceTables.services[index]
        #expect(service.methods.map(\.method) == service.expected.map(\.method))
        #expect(service.methods.allSatisfy { $0.service == service.name })
    }

    @Test(
        "each method has the kind, auth, idempotency and messages of API.md",
        arguments: ServiceTables.services.flatMap { service in service.expected.map { (service.name, $0) } })
    func methodRow(service: String, expected: ExpectedMethod) throws {
        let info = try #require(ServiceTables.allMethods.first { $0.service == service && $0.method == expected.method })
        #expect(info.kind == expected.kind)
        #expect(info.auth == expected.auth)
        #expect(info.idempotent == expected.idempotent)
        #expect(ServiceTables.render(info.requestFields) == expected.request)
        #expect(ServiceTables.render(info.responseFields) == expected.response)
    }

    @Test("every path is /<package>.<Service>/<Method>, and no two methods share one")
    func paths() {
        for info in ServiceTables.allMethods {
            #expect(info.path == "/\(info.service)/\(info.method)")
            let parts = info.service.split(separator: ".")
            #expect(parts.count == 4 && parts[0] == "shop" && parts[2] == "v1" && parts[3].hasSuffix("Service"), "\(info.service)")
            #expect(info.method.first?.isUppercase == true && !info.method.contains("/"))
        }
        #expect(Set(ServiceTables.allMethods.map(\.path)).count == ServiceTables.allMethods.count)
        #expect(AuthContract.signUp.path == "/shop.auth.v1.AuthService/SignUp")
        #expect(CatalogContract.importProducts.path == "/shop.catalog.v1.CatalogService/ImportProducts")
        #expect(BasketContract.watchBasket.path == "/shop.basket.v1.BasketService/WatchBasket")
        #expect(OrderContract.placeOrder.path == "/shop.order.v1.OrderService/PlaceOrder")
        #expect(StorefrontContract.getHome.path == "/shop.gateway.v1.StorefrontService/GetHome")
    }

    @Test("each descriptor constant's service is its enum's service name")
    func serviceNames() {
        #expect(AuthContract.service == "shop.auth.v1.AuthService")
        #expect(CatalogContract.service == "shop.catalog.v1.CatalogService")
        #expect(BasketContract.service == "shop.basket.v1.BasketService")
        #expect(OrderContract.service == "shop.order.v1.OrderService")
        #expect(StorefrontContract.service == "shop.gateway.v1.StorefrontService")
    }
}
