import Contracts
import Foundation
import RPC
import Testing

/// One message type under test: its fields, a fully populated value and one with every
/// optional field left out, reduced to closures so that a table can hold every type.
struct MessageSample: Sendable, CustomTestStringConvertible {
    /// The Swift type name, which is also how other messages' `fields` spell the type.
    let name: String
    /// The type's `fields`.
    let fields: [FieldDescriptor]
    /// The fully populated value, encoded with `JSONEncoder`.
    let full: Data
    /// The value with every optional property nil, encoded with `JSONEncoder`.
    let minimal: Data
    /// Decodes JSON as this type with Foundation's `JSONDecoder`.
    let decode: @Sendable (Data) throws -> Void
    /// Whether the full value survives `JSONEncoder`, then both `JSONDecoder` and the servers' `JSONCodec`.
    let roundTrips: @Sendable () throws -> Bool

    var testDescription: String { name }

    init<Message: RPCMessage & Equatable>(_ full: Message, minimal: Message? = nil) {
        name = String(describing: Message.self)
        fields = Message.fields
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // Encoding our own plain types cannot fail; an empty sample fails every test that uses it.
        self.full = (try? encoder.encode(full)) ?? Data()
        self.minimal = (try? encoder.encode(minimal ?? full)) ?? Data()
        decode = { data in _ = try JSONDecoder().decode(Message.self, from: data) }
        roundTrips = {
            let data = try JSONEncoder().encode(full)
            let viaFoundation = try JSONDecoder().decode(Message.self, from: data)
            let viaCodec = try JSONCodec.shared.decode(Message.self, from: data)
            // Our encoder's bytes, read back by both decoders.
            let ours = try JSONCodec.shared.encode(full)
            let oursViaFoundation = try JSONDecoder().decode(Message.self, from: ours)
            let oursViaCodec = try JSONCodec.shared.decode(Message.self, from: ours)
            return viaFoundation == full && viaCodec == full && oursViaFoundation == full && oursViaCodec == full
        }
    }
}

/// A sample value for every message type of the contracts.
enum Samples {
    static let money = Money(amount: 1999, currency: "USD")
    static let rating = Rating(rate: 4.5, count: 120)
    static let user = User(
        id: "u-1", email: "ada@example.com", emailVerified: true, displayName: "Ada", providers: ["password", "google"],
        createdAt: "2024-05-01T12:00:00Z")
    static let session = Session(accessToken: "eyJ.access", refreshToken: "refresh-1", expiresIn: 900, user: user)
    static let product = Product(
        id: 7, title: "Backpack", description: "Fits a laptop.", category: "bags", price: money,
        image: "https://img.example.com/7.png", rating: rating, stock: 12)
    static let category = Category(name: "bags", productCount: 4)
    static let basketItem = BasketItem(
        id: "6f1c2a64-0d6e-4c53-9f43-1b0d6f1f6a10", productId: 7, productTitle: "Backpack", unitPrice: money,
        imageURL: "https://img.example.com/7.png", count: 2, lineTotal: Money(amount: 3998, currency: "USD"))
    static let basket = Basket(
        items: [basketItem], itemCount: 2, total: Money(amount: 3998, currency: "USD"), version: 3,
        updatedAt: "2024-05-01T12:00:00Z")
    static let address = Address(
        name: "Ada Lovelace", line1: "1 Main St", line2: "Apt 2", city: "London", postalCode: "NW1", country: "GB")
    static let orderItem = OrderItem(
        productId: 7, productTitle: "Backpack", unitPrice: money, count: 2, lineTotal: Money(amount: 3998, currency: "USD"))
    static let payment = PaymentSummary(brand: "visa", last4: "4242")
    static let order = Order(
        id: "o-1", status: .paid, items: [orderItem], total: Money(amount: 3998, currency: "USD"),
        shippingAddress: address, payment: payment, createdAt: "2024-05-01T12:00:00Z", updatedAt: "2024-05-01T12:00:01Z")
    static let card = CardDetails(cardNumber: "4242424242424242", expMonth: 12, expYear: 2030, cvc: "042")
    static let jwk = JWK(
        kty: "EC", kid: "k-1", use: "sig", alg: "ES256", crv: "P-256", x: "eA", y: "eQ", n: "bg", e: "AQAB")

    /// Every message type, fully populated and with its optional fields absent.
    static let all: [MessageSample] = common + auth + catalog + basketAndOrder + storefront

    static let common: [MessageSample] = [
        MessageSample(Empty()),
        MessageSample(money),
        MessageSample(user, minimal: User(id: "u-1", email: "a@b.c", emailVerified: false, providers: [], createdAt: "t")),
        MessageSample(session),
        MessageSample(UserResponse(user: user)),
        MessageSample(rating),
        MessageSample(product),
        MessageSample(category),
        MessageSample(basketItem),
        MessageSample(basket),
        MessageSample(address, minimal: Address(name: "A", line1: "1", city: "C", postalCode: "P", country: "GB")),
        MessageSample(orderItem),
        MessageSample(payment),
        MessageSample(order, minimal: Order(
            id: "o-2", status: .pending, items: [], total: money, shippingAddress: address, createdAt: "t", updatedAt: "t")),
    ]

    static let auth: [MessageSample] = [
        MessageSample(
            SignUpRequest(email: "a@b.c", password: "correct horse", displayName: "Ada"),
            minimal: SignUpRequest(email: "a@b.c", password: "correct horse")),
        MessageSample(VerifyEmailRequest(token: "t-1")),
        MessageSample(ResendVerificationRequest(email: "a@b.c")),
        MessageSample(SignInRequest(email: "a@b.c", password: "correct horse")),
        MessageSample(
            SignInWithIdTokenRequest(provider: .apple, idToken: "eyJ.id", rawNonce: "n-1"),
            minimal: SignInWithIdTokenRequest(provider: .google, idToken: "eyJ.id")),
        MessageSample(RefreshSessionRequest(refreshToken: "refresh-1")),
        MessageSample(SignOutRequest(scope: .global)),
        MessageSample(RequestPasswordResetRequest(email: "a@b.c")),
        MessageSample(ResetPasswordRequest(token: "t-1", newPassword: "new password")),
        MessageSample(ChangePasswordRequest(currentPassword: "old password", newPassword: "new password")),
        MessageSample(UpdateProfileRequest(displayName: "Ada L.")),
        MessageSample(DeleteAccountRequest(password: "correct horse"), minimal: DeleteAccountRequest()),
        MessageSample(
            WatchAuthStateResponse(state: .signedIn, user: user), minimal: WatchAuthStateResponse(state: .signedOut)),
        MessageSample(GetJwksResponse(keys: [jwk])),
        MessageSample(jwk, minimal: JWK(kty: "OKP", kid: "k-2")),
    ]

    static let catalog: [MessageSample] = [
        MessageSample(
            ListProductsRequest(category: "bags", query: "back", sort: .priceAscending, pageSize: 10, pageToken: "p-2"),
            minimal: ListProductsRequest()),
        MessageSample(GetProductRequest(id: 7)),
        MessageSample(BatchGetProductsRequest(ids: [7, 8])),
        MessageSample(AddFavoriteRequest(productId: 7)),
        MessageSample(RemoveFavoriteRequest(productId: 7)),
        MessageSample(PageRequest(pageSize: 5, pageToken: "p-2"), minimal: PageRequest()),  // ListFavorites, ListOrders
        MessageSample(
            ListProductsResponse(products: [product], nextPageToken: "p-3", totalSize: 21, suggestion: "headphones"),
            minimal: ListProductsResponse(products: [product], nextPageToken: "p-3", totalSize: 21)),
        MessageSample(ProductResponse(product: product)),
        MessageSample(BatchGetProductsResponse(products: [product], missingIds: [8])),
        MessageSample(ListCategoriesResponse(categories: [category])),
        MessageSample(ListFavoritesResponse(products: [product], nextPageToken: "")),
        MessageSample(UpsertProductRequest(product: product)),
        MessageSample(DeleteProductRequest(id: 7)),
        MessageSample(ImportProductsRequest(product: product)),
        MessageSample(ImportProductsResponse(created: 3, updated: 1, failed: [ImportFailure(index: 2, reason: "no title")])),
        MessageSample(ImportFailure(index: 2, reason: "no title")),
        MessageSample(StockReservationItem(productId: 7, count: 2)),
        MessageSample(ReserveStockRequest(reservationId: "o-1", items: [StockReservationItem(productId: 7, count: 2)])),
        MessageSample(ReleaseStockRequest(reservationId: "o-1")),
    ]

    static let basketAndOrder: [MessageSample] = [
        MessageSample(AddItemRequest(productId: 7, count: 3)),
        MessageSample(
            UpdateItemCountRequest(itemId: "i-1", count: 4, expectedVersion: 3),
            minimal: UpdateItemCountRequest(itemId: "i-1", count: 0)),
        MessageSample(RemoveItemRequest(itemId: "i-1")),
        MessageSample(ClearBasketRequest(expectedVersion: 3), minimal: ClearBasketRequest()),
        MessageSample(card),
        MessageSample(PlaceOrderRequest(shippingAddress: address, payment: card)),
        MessageSample(GetOrderRequest(id: "o-1")),
        MessageSample(ListOrdersResponse(orders: [order], nextPageToken: "p-3")),
        MessageSample(CancelOrderRequest(id: "o-1")),
    ]

    static let storefront: [MessageSample] = [
        MessageSample(GetProductPageRequest(productId: 7)),
        MessageSample(
            GetProductPageResponse(product: product, isFavorite: true, basketItem: basketItem),
            minimal: GetProductPageResponse(product: product)),
        MessageSample(GetHomeRequest(category: "bags", pageSize: 8), minimal: GetHomeRequest()),
        MessageSample(
            GetHomeResponse(categories: [category], products: [product], nextPageToken: "p-2", basketItemCount: 2)),
    ]
}
