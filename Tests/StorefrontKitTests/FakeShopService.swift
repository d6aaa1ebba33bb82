import Contracts
import Foundation
import RPC
@testable import StorefrontKit
import Synchronization

/// catalog-svc's `ListProducts` and order-svc's `ListOrders` and `PlaceOrder` as far as the
/// client's paging and retries go, served in this process: `ListProducts` pages through
/// ``productCount`` products with tokens of its own, refusing others as `INVALID_PAGE_TOKEN`;
/// `PlaceOrder` answers its first ``inProgressAnswers`` attempts, and every attempt within
/// ``inProgressDuration`` of the first, with `REQUEST_IN_PROGRESS`, and then one order per
/// idempotency key. Every request is recorded.
/// A ``StorefrontClient`` calls it through an `InProcessTransport`. Thread-safe.
final class FakeShopService: Sendable {
    private struct State {
        var pageTokens: [String?] = []
        var placeKeys: [String?] = []
        var ordersByKey: [String: Order] = [:]
        var firstPlace: ContinuousClock.Instant?
    }

    private let state = Mutex(State())
    /// How many products the catalog lists.
    let productCount: Int
    /// How many `PlaceOrder` attempts are answered `REQUEST_IN_PROGRESS` before one is placed.
    let inProgressAnswers: Int
    /// How long from the first `PlaceOrder` attempt every attempt is answered `REQUEST_IN_PROGRESS`.
    let inProgressDuration: Duration

    /// A fake listing `productCount` products, answering the first `inProgressAnswers` attempts
    /// to place an order, and those within `inProgressDuration` of the first, as in progress.
    init(productCount: Int = 10, inProgressAnswers: Int = 0, inProgressDuration: Duration = .zero) {
        self.productCount = productCount
        self.inProgressAnswers = inProgressAnswers
        self.inProgressDuration = inProgressDuration
    }

    /// The `pageToken` of every `ListProducts` request, in order (nil: none sent).
    var pageTokens: [String?] { state.withLock { $0.pageTokens } }
    /// The `idempotency-key` of every `PlaceOrder` attempt, in order.
    var placeKeys: [String?] { state.withLock { $0.placeKeys } }
    /// How many orders were placed.
    var orderCount: Int { state.withLock { $0.ordersByKey.count } }

    /// A client of this fake, signed in with a session that does not expire soon.
    func client() -> StorefrontClient {
        var configuration = StorefrontConfiguration()
        let user = User(id: "user-1", email: "fake@example.com", emailVerified: true, providers: ["password"], createdAt: "2026-01-01T00:00:00Z")
        configuration.credentialStore = MemoryCredentialStore(StoredSession(
            accessToken: "access", refreshToken: "refresh", accessTokenExpiresAt: Date() + 3600, user: user))
        return StorefrontClient(
            baseURL: URL(string: "http://fake.invalid")!, configuration: configuration,
            transport: InProcessTransport(router: router()))
    }

    /// The product `id`.
    static func product(_ id: Int) -> Product {
        Product(
            id: id, title: "Product \(id)", description: "", category: "things", price: Money(amount: 100 * id, currency: "USD"),
            image: "", rating: Rating(rate: 4, count: 1), stock: 10)
    }

    private func router() -> Router {
        var router = Router()
        router.unary(CatalogContract.listProducts) { request, _ in try self.listProducts(request) }
        router.unary(OrderContract.placeOrder) { request, context in
            try self.placeOrder(request, key: context.metadata[MetadataKey.idempotencyKey])
        }
        return router
    }

    /// The page at `request.pageToken` ("p<offset>").
    private func listProducts(_ request: ListProductsRequest) throws -> ListProductsResponse {
        state.withLock { $0.pageTokens.append(request.pageToken) }
        guard let offset = offset(of: request.pageToken) else {
            throw RPCError(code: .invalidArgument, reason: "INVALID_PAGE_TOKEN", message: "The page token is not valid.")
        }
        let end = min(offset + request.effectivePageSize, productCount)
        return ListProductsResponse(
            products: (offset..<end).map { Self.product($0 + 1) }, nextPageToken: end < productCount ? "p\(end)" : "",
            totalSize: productCount)
    }

    /// The offset `token` stands for: 0 without one, `n` for "p<n>" within the catalog; nil
    /// for any other token.
    private func offset(of token: String?) -> Int? {
        guard let token, !token.isEmpty else { return 0 }
        guard token.hasPrefix("p"), let offset = Int(token.dropFirst()), (1..<productCount).contains(offset) else { return nil }
        return offset
    }

    /// The order of `key`, placed by the first attempt after the in-progress ones.
    private func placeOrder(_ request: PlaceOrderRequest, key: String?) throws -> Order {
        try state.withLock { state in
            state.placeKeys.append(key)
            guard let key else {
                throw RPCError(code: .invalidArgument, reason: "IDEMPOTENCY_KEY_REQUIRED", message: "An idempotency key is required.")
            }
            let firstPlace = state.firstPlace ?? .now
            state.firstPlace = firstPlace
            if state.placeKeys.count <= inProgressAnswers || ContinuousClock.now < firstPlace + inProgressDuration {
                throw RPCError(code: .aborted, reason: "REQUEST_IN_PROGRESS", message: "The order is being placed.")
            }
            if let order = state.ordersByKey[key] { return order }
            let order = Order(
                id: "order-\(state.ordersByKey.count + 1)", status: .paid, items: [], total: Money(amount: 0, currency: "USD"),
                shippingAddress: request.shippingAddress, createdAt: "2026-01-01T00:00:00Z", updatedAt: "2026-01-01T00:00:00Z")
            state.ordersByKey[key] = order
            return order
        }
    }
}
