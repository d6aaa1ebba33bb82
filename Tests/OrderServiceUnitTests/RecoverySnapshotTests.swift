import Contracts
import Crypto
import Logging
import RPCHTTP2
import ServiceKit
import Storage
import Telemetry
import Testing

@testable import order_svc
import RPC

/// The recovery pass works from a list read a moment before it acts: an order on it may have
/// been finished since by the call placing it, which released it just before recovery claimed
/// it. Recovery must act on the order's step as it is, never on the list's.
@Suite("Recovery pass: a stale list")
struct RecoverySnapshotTests {
    /// An order service on `store` whose upstreams are unreachable (recovery must not need them here).
    static func service(_ store: OrderStore) throws -> OrderService { try service(store, registry: nil) }

    /// ``service(_:)`` counting into `registry`.
    static func service(_ store: OrderStore, registry: MetricsRegistry?) throws -> OrderService {
        let nowhere = SocketAddressText(host: "127.0.0.1", port: 1)
        return OrderService(
            store: store, payments: TestPaymentProcessor(store: store), basket: try RPCClient(target: nowhere),
            catalog: try RPCClient(target: nowhere), internalKey: "internal",
            requestKey: SymmetricKey(size: .bits256), pageTokens: PageTokens(secret: "secret"), inFlight: InFlightOrders(),
            logger: Logger(label: "recovery-test") { _ in SwiftLogNoOpLogHandler() }, metrics: OrderMetrics(registry: registry))
    }

    @Test("an order listed at reserved but paid since is left alone: not refunded, not released, not deleted")
    func paidSinceListed() async throws {
        try await Self.leavesOrdersPaidSinceListed(on: .sqlite)
    }

    @Test("discarding removes only an order still pending")
    func discardKeepsFinishedOrders() async throws {
        try await Self.discardsOnlyPendingOrders(on: .sqlite)
    }

    /// An order listed at `reserved` but paid since is left alone by the pass.
    static func leavesOrdersPaidSinceListed(on backend: StoreBackend) async throws {
        try await backend.withStore { store in try await leavesOrdersPaidSinceListed(in: store) }
    }

    /// ``leavesOrdersPaidSinceListed(on:)`` in `store`.
    private static func leavesOrdersPaidSinceListed(in store: OrderStore) async throws {
        let service = try Self.service(store)
        _ = try await store.claim(userID: "u1", key: "k1", requestHash: "h")
        let listed = IdempotencyStoreTests.order("o1", user: "u1", key: "k1", step: "reserved")
        try await store.insertClaimed(listed)
        _ = try await store.recordTestCharge(
            orderID: "o1", amount: 100, currency: "USD", brand: "visa", last4: "4242",
            charge: OrderStore.TestCharge(status: "charged", declineReason: nil))
        // The call placing it finishes: paid and answered.
        var paid = listed.order
        paid.status = .paid
        try await store.answer(userID: "u1", key: "k1", with: StoredAnswer(order: paid), orderID: "o1", step: "done", status: .paid)

        #expect(await service.recover(listed: [listed]) == 0)
        #expect(try await store.testCharge(orderID: "o1")?.status == "charged")
        let record = try await store.order(id: "o1")
        #expect(record?.step == "done" && record?.order.status == .paid)
        #expect(try await IdempotencyStoreTests.keys(in: store) == ["u1/k1"])
    }

    /// Discarding removes only an order still pending.
    static func discardsOnlyPendingOrders(on backend: StoreBackend) async throws {
        try await backend.withStore { store in try await discardsOnlyPendingOrders(in: store) }
    }

    /// ``discardsOnlyPendingOrders(on:)`` in `store`.
    private static func discardsOnlyPendingOrders(in store: OrderStore) async throws {
        _ = try await store.claim(userID: "u1", key: "k1", requestHash: "h")
        try await store.insertClaimed(IdempotencyStoreTests.order("o1", user: "u1", key: "k1", step: "done"))
        try await store.discard(orderID: "o1", userID: "u1", key: "k1")
        #expect(try await store.order(id: "o1") != nil)
        _ = try await store.claim(userID: "u1", key: "k2", requestHash: "h")
        try await store.insertClaimed(IdempotencyStoreTests.order("o2", user: "u1", key: "k2", step: "reserved"))
        try await store.discard(orderID: "o2", userID: "u1", key: "k2")
        #expect(try await store.order(id: "o2") == nil)
    }
}
