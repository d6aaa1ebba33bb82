import Contracts
import Foundation
import RPC
import ServiceTestSupport
@testable import StorefrontKit
import Synchronization
import Testing

/// Every method of `client.basket` against the debug gateway and the services (processes),
/// over Connect on HTTP/1.1 — its errors as ``StorefrontError`` reasons — and `changes` as an
/// app lives with it: another device's change arriving, a restart of basket-svc and of the
/// gateway outlived, the watch ended on the server when the app stops listening, and the
/// stream finished when the user signs out.
@Suite("StorefrontKit basket, live")
struct StorefrontKitBasketLiveTests {
    @Test("current, add, setCount, remove, clear — and their errors as reasons")
    func everyMethod() async throws {
        try await withKitStack { kit in
            let client = try kit.client()
            _ = try await kit.signedInUser(client)
            let basket = client.basket
            let empty = try await basket.current()
            #expect(empty.items.isEmpty && empty.version == 0)

            let one = try await basket.add(productID: 1)
            #expect(one.items.map(\.productId) == [1] && one.items.first?.count == 1 && one.version == 1)
            await expectReason(.alreadyInBasket, .alreadyExists) { try await basket.add(productID: 1) }
            await expectReason(.productNotFound, .notFound) { try await basket.add(productID: 999_999) }
            await expectReason(.invalidCount, .invalidArgument) { try await basket.add(productID: 2, count: 11) }
            let scarce = try await kit.createProduct(stock: 2)
            await expectReason(.outOfStock(productID: scarce.id, available: 2), .failedPrecondition) {
                try await basket.add(productID: scarce.id, count: 3)
            }

            let item = try #require(one.items.first).id
            let three = try await basket.setCount(itemID: item, count: 3, expectedVersion: one.version)
            #expect(three.items.first?.count == 3 && three.itemCount == 3 && three.version == 2)
            await expectReason(.versionConflict, .aborted) { try await basket.setCount(itemID: item, count: 2, expectedVersion: one.version) }
            await expectReason(.invalidCount, .invalidArgument) { try await basket.setCount(itemID: item, count: 11) }
            await expectReason(.itemNotFound, .notFound) { try await basket.setCount(itemID: UUID().uuidString, count: 1) }
            let withScarce = try await basket.add(productID: scarce.id)
            let scarceItem = try #require(withScarce.items.first { $0.productId == scarce.id }).id
            await expectReason(.outOfStock(productID: scarce.id, available: 2), .failedPrecondition) {
                try await basket.setCount(itemID: scarceItem, count: 5)
            }
            #expect(try await basket.setCount(itemID: scarceItem, count: 0).items.map(\.productId) == [1])  // 0 removes

            let removed = try await basket.remove(itemID: item)
            #expect(removed.items.isEmpty)
            await expectReason(.itemNotFound, .notFound) { try await basket.remove(itemID: item) }
            let two = try await basket.add(productID: 2, count: 2)
            await expectReason(.versionConflict, .aborted) { try await basket.clear(expectedVersion: removed.version) }
            let cleared = try await basket.clear(expectedVersion: two.version)
            #expect(cleared.items.isEmpty && cleared.version == two.version + 1)
            #expect(try await basket.current() == cleared)

            // A basket holds 100 lines.
            var ids = Array(1...24)
            while ids.count < BasketContract.maxLines + 1 { ids.append(try await kit.createProduct(stock: 10).id) }
            for id in ids.prefix(BasketContract.maxLines) { try await basket.add(productID: id) }
            await expectReason(.basketFull, .resourceExhausted) { try await basket.add(productID: ids[BasketContract.maxLines]) }

            let stranger = try kit.client()
            await expectReason(.missingToken, .unauthenticated) { _ = try await stranger.basket.current() }
            await client.close()
            await stranger.close()
        }
    }

    @Test("changes: the basket now, another device's change, and on across a basket-svc restart and a gateway restart (same port), no version twice")
    func changesOutliveRestarts() async throws {
        try await withKitStack { kit in
            let phone = try kit.client()
            let (email, _) = try await kit.signedInUser(phone)
            let tablet = try kit.client()
            try await tablet.auth.signIn(email: email, password: KitStack.password)
            let seen = BasketsSeen()
            let listener = Task { try await seen.collect(phone.basket.changes) }

            #expect(await seen.waitFor(version: 0), "\(seen.versions)")
            try await tablet.basket.add(productID: 1)
            #expect(await seen.waitFor(version: 1), "\(seen.versions)")
            #expect(seen.last?.items.map(\.productId) == [1])

            // basket-svc stops (its watches end UNAVAILABLE) and starts again on its port.
            try await kit.stack.restart(.basket)
            try await Self.untilServed { try await tablet.basket.add(productID: 2) }
            #expect(await seen.waitFor(version: 2, within: .seconds(30)), "\(seen.versions)\n\(kit.stack.logTails())")

            // The gateway stops (ending the watches as it goes) and starts again on the same port.
            try await kit.stack.restart(.gateway)
            try await Self.untilServed { try await tablet.basket.add(productID: 3) }
            #expect(await seen.waitFor(version: 3, within: .seconds(60)), "\(seen.versions)\n\(kit.stack.logTails())")
            #expect(seen.last?.items.map(\.productId) == [1, 2, 3])

            #expect(seen.versions == [0, 1, 2, 3])  // each once: a reconnect's first basket repeats none
            // The watch open now goes through the restarted gateway, which logs it as it ends.
            listener.cancel()
            _ = await listener.result
            let gateway = try kit.stack.service(.gateway)
            #expect(await eventually(within: .seconds(10)) {
                gateway.log.lines.contains { $0.contains("method=\(BasketContract.watchBasket.path) ") && $0.contains("status=CANCELLED") }
            })
            await phone.close()
            await tablet.close()
        }
    }

    @Test("Cancelling the task consuming changes ends the server call: the gateway logs the watch CANCELLED")
    func cancellationEndsWatch() async throws {
        try await withKitStack { kit in
            let client = try kit.client()
            _ = try await kit.signedInUser(client)
            let seen = BasketsSeen()
            let listener = Task { try await seen.collect(client.basket.changes) }
            #expect(await seen.waitFor(version: 0))
            let watchLine = "method=\(BasketContract.watchBasket.path) "
            #expect(try !kit.stack.service(.gateway).log.lines.contains { $0.contains(watchLine) })  // open: not logged yet
            listener.cancel()
            try await listener.value
            let ended = await eventually(within: .seconds(10)) {
                (try? kit.stack.service(.gateway).log.lines.contains { $0.contains(watchLine) && $0.contains("status=CANCELLED") }) == true
            }
            let gatewayTail = try kit.stack.service(.gateway).log.tail(10)
            #expect(ended, "\(gatewayTail)")
            await client.close()
        }
    }

    @Test("Signed out — here, or everywhere from another device — the stream finishes UNAUTHENTICATED")
    func signOutFinishes() async throws {
        try await withKitStack { kit in
            let phone = try kit.client()
            let (email, _) = try await kit.signedInUser(phone)
            var here = phone.basket.changes.makeAsyncIterator()
            #expect(try await here.next()?.version == 0)
            try await phone.auth.signOut()
            let local = await #expect(throws: StorefrontError.self) { _ = try await here.next() }
            #expect(local?.code == .unauthenticated && local?.reason == .missingToken, "\(String(describing: local))")
            let signedOut = await #expect(throws: StorefrontError.self) {
                for try await _ in phone.basket.changes {}
            }
            #expect(signedOut?.code == .unauthenticated)

            // Signed out everywhere from the tablet: basket-svc ends the phone's watch
            // SESSION_REVOKED, the phone's refresh is refused, and the phone signs out.
            try await phone.auth.signIn(email: email, password: KitStack.password)
            let tablet = try kit.client()
            try await tablet.auth.signIn(email: email, password: KitStack.password)
            var remote = phone.basket.changes.makeAsyncIterator()
            #expect(try await remote.next()?.version == 0)
            try await tablet.auth.signOut(everywhere: true)
            let revoked = await #expect(throws: StorefrontError.self) { _ = try await remote.next() }
            #expect(revoked?.code == .unauthenticated, "\(String(describing: revoked))")
            #expect(phone.auth.currentUser == nil)
            await phone.close()
            await tablet.close()
        }
    }

    /// Runs `call` until the restarted service behind the gateway serves it.
    static func untilServed(_ call: () async throws -> Void) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            do {
                return try await call()
            } catch let error as StorefrontError where error.code == .unavailable && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }
}

/// The baskets a listener received, in order. Thread-safe.
final class BasketsSeen: Sendable {
    private let baskets = Mutex<[Basket]>([])

    /// Every version received, in order.
    var versions: [Int] { baskets.withLock { $0.map(\.version) } }
    /// The last basket received.
    var last: Basket? { baskets.withLock { $0.last } }

    /// Keeps every basket of `changes` until it ends or the task is cancelled.
    func collect(_ changes: AsyncThrowingStream<Basket, any Error>) async throws {
        for try await basket in changes { baskets.withLock { $0.append(basket) } }
    }

    /// Whether a basket of `version` arrives within `limit`.
    func waitFor(version: Int, within limit: Duration = .seconds(10)) async -> Bool {
        await eventually(within: limit) { self.versions.contains(version) }
    }
}

extension KitStack {
    /// Creates a product through the gateway with the admin key (admin `UpsertProduct`).
    func createProduct(stock: Int) async throws -> Product {
        let product = Product(
            title: "Kit product \(UUID().uuidString.prefix(6))", description: "Made for the basket tests.", category: "test goods",
            price: Money(amount: 1_250, currency: "USD"), image: "https://img.shop.test/p.png", rating: Rating(rate: 4, count: 1),
            stock: stock)
        return try await stack.client(.gateway).unary(
            CatalogContract.upsertProduct, UpsertProductRequest(product: product),
            options: CallOptions(metadata: [MetadataKey.apiKey: stack.adminKey], timeout: .seconds(15))
        ).product
    }
}
