import Contracts
import Foundation
import RPC
import ServiceTestSupport
@testable import StorefrontKit
import Synchronization
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Every method of `client.orders` against the debug gateway and services (processes), over
/// Connect on HTTP/1.1: placing (paid, declined, refused), listing, reading and cancelling;
/// and one order, charged once, for a `place` whose call is retried — after the gateway refused
/// its expired token, when its answer was lost, or by the app with the same key.
@Suite("StorefrontKit orders, live")
struct StorefrontKitOrdersLiveTests {
    @Test("place, orders, order, cancel; an empty basket, an invalid and a declined card, a bad address")
    func orderLife() async throws {
        try await withKitStack { kit in
            let client = try kit.client()
            let orders = client.orders
            await expectReason(.missingToken, .unauthenticated) { _ = try await orders.orders().all() }
            _ = try await kit.signedInUser(client)
            #expect(try await orders.orders().all() == [[]])
            await expectReason(.emptyBasket, .failedPrecondition) {
                _ = try await orders.place(address: KitStack.address, payment: KitStack.goodCard)
            }

            let products = try await client.catalog.products(pageSize: 2).all()[0].products
            try await KitStack.addToBasket(client, productID: products[0].id, count: 2)
            let basket = try await KitStack.addToBasket(client, productID: products[1].id)
            await expectReason(.invalidCard, .invalidArgument) {
                _ = try await orders.place(address: KitStack.address, payment: KitStack.invalidCard)
            }
            var badAddress = KitStack.address
            badAddress.country = ""
            let refused = await expectCode(.invalidArgument) { _ = try await orders.place(address: badAddress, payment: KitStack.goodCard) }
            #expect(refused?.fieldViolations.contains { $0.field.contains("country") } == true, "\(String(describing: refused))")
            await expectReason(.paymentDeclined, .failedPrecondition) {
                _ = try await orders.place(address: KitStack.address, payment: KitStack.declinedCard)
            }
            #expect(try await KitStack.basket(client).items == basket.items, "a declined card leaves the basket")

            let placed = try await orders.place(address: KitStack.address, payment: KitStack.goodCard)
            #expect(placed.status == .paid && placed.total == basket.total && placed.shippingAddress == KitStack.address)
            #expect(placed.items.map(\.productId) == basket.items.map(\.productId) && placed.items.map(\.count) == [2, 1])
            #expect(placed.payment == PaymentSummary(brand: "visa", last4: "4242"))
            #expect(try await KitStack.basket(client).items.isEmpty)

            // Newest first, a page at a time: the paid order, then the declined one.
            let pages = try await orders.orders(pageSize: 1).all()
            #expect(pages.count == 2 && pages.allSatisfy { $0.count == 1 })
            let declined = try #require(pages.last?.first)
            #expect(pages.first?.first == placed)
            #expect(declined.status == .paymentFailed && declined.payment?.last4 == "0002")
            #expect(try await orders.order(id: placed.id) == placed)
            await expectReason(.orderNotFound, .notFound) { _ = try await orders.order(id: "no-such-order") }

            let cancelled = try await orders.cancel(id: placed.id)
            #expect(cancelled.id == placed.id && cancelled.status == .cancelled)
            #expect(try await orders.order(id: placed.id).status == .cancelled)
            await expectReason(.orderNotCancellable, .failedPrecondition) { try await orders.cancel(id: placed.id) }
            await expectReason(.orderNotCancellable, .failedPrecondition) { try await orders.cancel(id: declined.id) }
            await expectReason(.orderNotFound, .notFound) { try await orders.cancel(id: "no-such-order") }

            // Another user sees none of it.
            let stranger = try kit.client()
            _ = try await kit.signedInUser(stranger)
            await expectReason(.orderNotFound, .notFound) { _ = try await stranger.orders.order(id: placed.id) }
            #expect(try await stranger.orders.orders().all() == [[]])
            await client.close()
            await stranger.close()
        }
    }

    @Test("A place retried after the gateway refused its expired token: one idempotency key, one order, charged once; a second place is a second order")
    func placeRetriedAfterRefusedToken() async throws {
        try await withKitStack { kit in
            let signer = try kit.client()
            let (_, user) = try await kit.signedInUser(signer)
            let signedIn = try #require(await signer.calls.sessions.current)
            let product = try await signer.catalog.products(pageSize: 1).all()[0].products[0]
            try await KitStack.addToBasket(signer, productID: product.id)

            // The device's clock thinks the token good; the gateway refuses it as expired.
            let forged = try ExpiredAccessToken.forged(from: signedIn.accessToken, signedWith: try kit.stack.signingKey())
            let store = MemoryCredentialStore(StoredSession(
                accessToken: forged, refreshToken: signedIn.refreshToken, accessTokenExpiresAt: Date() + 600, user: user))
            let keys = IdempotencyKeyRecorder()
            let device = try kit.client(store: store, interceptors: [keys])
            let order = try await device.orders.place(address: KitStack.address, payment: KitStack.goodCard)
            #expect(keys.statuses == [401, 200], "refused, then placed with the refreshed token")
            #expect(keys.keys.count == 2 && Set(keys.keys).count == 1, "\(keys.keys)")
            #expect(try await device.orders.orders().all().joined().map(\.id) == [order.id])
            #expect(try await kit.chargeCount() == 1)

            try await KitStack.addToBasket(device, productID: product.id)
            let second = try await device.orders.place(address: KitStack.address, payment: KitStack.goodCard)
            #expect(second.id != order.id)
            #expect(keys.keys.count == 3 && Set(keys.keys).count == 2, "\(keys.keys)")
            #expect(try await device.orders.orders().all().joined().map(\.id) == [second.id, order.id])
            #expect(try await kit.chargeCount() == 2)
            await signer.close()
            await device.close()
        }
    }

    @Test("A place whose answer is lost on the way is retried with its key: the same order answers, placed and charged once")
    func placeRetriedAfterLostAnswer() async throws {
        try await withKitStack { kit in
            let keys = IdempotencyKeyRecorder()
            var configuration = StorefrontConfiguration()
            configuration.credentialStore = MemoryCredentialStore()
            configuration.interceptors = [keys]
            configuration.requestTimeout = .seconds(15)
            let connect = ConnectTransport(
                baseURL: try kit.baseURL, methods: StorefrontClient.methods, interceptors: configuration.interceptors)
            let losing = AnswerLosingTransport(connect, losingFirstAnswerOf: OrderContract.placeOrder.path)
            let client = StorefrontClient(baseURL: try kit.baseURL, configuration: configuration, transport: losing)
            _ = try await kit.signedInUser(client)
            let product = try await client.catalog.products(pageSize: 1).all()[0].products[0]
            try await KitStack.addToBasket(client, productID: product.id)

            let order = try await client.orders.place(address: KitStack.address, payment: KitStack.goodCard)
            #expect(losing.lostAnswers == 1, "the first answer was lost, so the call was retried")
            #expect(keys.statuses == [200, 200] && keys.keys.count == 2 && Set(keys.keys).count == 1, "\(keys.keys)")
            #expect(order.status == .paid)
            #expect(try await client.orders.orders().all().joined().map(\.id) == [order.id])
            let calls = try kit.stack.service(.order).log.lines.filter { $0.contains("method=\(OrderContract.placeOrder.path) ") }
            #expect(calls.count == 2, "both attempts reached order-svc: \(calls)")
            #expect(try await kit.chargeCount() == 1)
            await client.close()
        }
    }

    @Test("Two places with the app's own key are one order, charged once: how an app retries an order whose outcome is unknown")
    func placeRetriedByAppWithItsKey() async throws {
        try await withKitStack { kit in
            let keys = IdempotencyKeyRecorder()
            let client = try kit.client(interceptors: [keys])
            _ = try await kit.signedInUser(client)
            let product = try await client.catalog.products(pageSize: 1).all()[0].products[0]
            try await KitStack.addToBasket(client, productID: product.id)

            let key = UUID().uuidString
            let order = try await client.orders.place(address: KitStack.address, payment: KitStack.goodCard, idempotencyKey: key)
            let again = try await client.orders.place(address: KitStack.address, payment: KitStack.goodCard, idempotencyKey: key)
            #expect(again == order)
            #expect(keys.keys == [key, key] && keys.statuses == [200, 200])
            #expect(try await client.orders.orders().all().joined().map(\.id) == [order.id])
            #expect(try await kit.chargeCount() == 1)
            await client.close()
        }
    }
}

/// Records the `idempotency-key` of every `PlaceOrder` request and the status of each answer.
/// Thread-safe.
final class IdempotencyKeyRecorder: RequestInterceptor {
    private let recorded = Mutex<(keys: [String], statuses: [Int])>(([], []))

    /// Notes the key of a `PlaceOrder` request.
    func intercept(_ request: inout URLRequest) {
        guard request.url?.path == OrderContract.placeOrder.path else { return }
        let key = request.value(forHTTPHeaderField: OrderContract.idempotencyKeyHeader) ?? "<none>"
        recorded.withLock { $0.keys.append(key) }
    }

    /// Notes the status of a `PlaceOrder` answer.
    func received(_ response: HTTPURLResponse, for request: URLRequest) {
        guard request.url?.path == OrderContract.placeOrder.path else { return }
        recorded.withLock { $0.statuses.append(response.statusCode) }
    }

    /// The keys of the `PlaceOrder` requests, in order.
    var keys: [String] { recorded.withLock { $0.keys } }
    /// The HTTP statuses of the `PlaceOrder` answers, in order.
    var statuses: [Int] { recorded.withLock { $0.statuses } }
}
