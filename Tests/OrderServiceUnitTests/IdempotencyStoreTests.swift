import Contracts
import Storage
import Testing

@testable import order_svc

/// `OrderStore`'s idempotency keys: what pruning drops and what it must keep. Each check is
/// written once for either backend (`on backend:`); the tests here run it on SQLite,
/// `OrderStorePostgreSQLLiveTests` on PostgreSQL.
@Suite("OrderStore: pruning idempotency keys")
struct IdempotencyStoreTests {
    static let epoch: Int64 = 1_750_000_000

    /// A pending order of `user` made under `key`, stored at `step`.
    static func order(_ id: String, user: String, key: String, step: String) -> OrderRecord {
        OrderRecord(
            order: Order(
                id: id, status: .pending, items: [], total: Money(amount: 100, currency: "USD"),
                shippingAddress: Address(name: "Ada", line1: "1 Main St", city: "Springfield", postalCode: "12345", country: "US"),
                createdAt: "2025-06-15T00:00:00Z", updatedAt: "2025-06-15T00:00:00Z"),
            userID: user, step: step, basketVersion: 1, idempotencyKey: key)
    }

    /// The keys stored, as "user/key".
    static func keys(in store: OrderStore) async throws -> Set<String> {
        try await store.database.read { connection in
            Set(try connection.query("SELECT user_id, key FROM idempotency_keys").map {
                "\(try $0.value(at: 0, as: String.self))/\(try $0.value(at: 1, as: String.self))"
            })
        }
    }

    @Test("at start, keys a crash left running without an order are freed; keys with an order stay for recovery")
    func freeAbandoned() async throws {
        try await Self.freesAbandonedKeys(on: .sqlite)
    }

    @Test("an answer that removes its pending order does both in one step, and only for an order still pending")
    func answerRemovingOrder() async throws {
        try await Self.answersRemovingOrder(on: .sqlite)
    }

    @Test("past retention: answered keys and keys left running go; a key an unfinished order still needs stays")
    func pruneKeys() async throws {
        try await Self.prunesKeys(on: .sqlite)
    }

    @Test("a key claimed later than the cutoff stays: a live call, on this replica or another, may be working under it")
    func youngKeysStay() async throws {
        try await Self.keepsYoungKeys(on: .sqlite)
    }

    /// At start, keys a crash left running without an order are freed; keys with an order stay.
    static func freesAbandonedKeys(on backend: StoreBackend) async throws {
        try await backend.withStore { store in try await freesAbandonedKeys(in: store) }
    }

    /// ``freesAbandonedKeys(on:)`` in `store`.
    private static func freesAbandonedKeys(in store: OrderStore) async throws {
        for key in ["crashed", "with-order", "answered", "order-gone"] {
            _ = try await store.claim(userID: "u1", key: key, requestHash: "h", now: Self.epoch)
        }
        try await store.insertClaimed(Self.order("o1", user: "u1", key: "with-order", step: "charged"), now: Self.epoch)
        try await store.answer(userID: "u1", key: "answered", with: StoredAnswer(order: nil, error: nil))
        // A crash after an undone order was removed and before its key was freed.
        try await store.insertClaimed(Self.order("o2", user: "u1", key: "order-gone", step: "priced"), now: Self.epoch)
        try await store.remove(orderID: "o2")
        #expect(try await store.freeAbandonedKeys(claimedBy: store.abandonedKeyCutoff(atStartUp: true)) == 2)
        #expect(try await Self.keys(in: store) == ["u1/with-order", "u1/answered"])
        // The client's retry with the crashed key starts afresh.
        guard case .claimed = try await store.claim(userID: "u1", key: "crashed", requestHash: "h", now: Self.epoch + 60) else {
            Issue.record("the crashed key is still claimed")
            return
        }
    }

    /// An answer that removes its pending order does both in one step, only for an order still pending.
    static func answersRemovingOrder(on backend: StoreBackend) async throws {
        try await backend.withStore { store in try await answersRemovingOrder(in: store) }
    }

    /// ``answersRemovingOrder(on:)`` in `store`.
    private static func answersRemovingOrder(in store: OrderStore) async throws {
        _ = try await store.claim(userID: "u1", key: "k1", requestHash: "h", now: Self.epoch)
        try await store.insertClaimed(Self.order("o1", user: "u1", key: "k1", step: "priced"), now: Self.epoch)
        let answer = StoredAnswer(order: nil, error: StoredError(code: 9, reason: "OUT_OF_STOCK", message: "gone", details: nil))
        try await store.answer(userID: "u1", key: "k1", with: answer, removingOrder: "o1")
        #expect(try await store.order(id: "o1") == nil)
        guard case .answered(let stored) = try await store.claim(userID: "u1", key: "k1", requestHash: "h", now: Self.epoch + 1) else {
            Issue.record("the key was not answered")
            return
        }
        #expect(stored == answer)
        // A key a retry claimed anew (another order) keeps its state; a finished order stays.
        _ = try await store.claim(userID: "u1", key: "k2", requestHash: "h", now: Self.epoch)
        try await store.insertClaimed(Self.order("o2", user: "u1", key: "k2", step: "done"), now: Self.epoch)
        try await store.answer(userID: "u1", key: "k2", with: answer, removingOrder: "o3")
        #expect(try await store.order(id: "o2") != nil)
        guard case .inProgress = try await store.claim(userID: "u1", key: "k2", requestHash: "h", now: Self.epoch + 1) else {
            Issue.record("the key of another order was answered")
            return
        }
    }

    @Test("compensation runs to its end in a cancelled call")
    func uncancelledWork() async throws {
        let call = Task {
            await OrderService.uncancelled {
                try? await Task.sleep(for: .milliseconds(50))
                return !Task.isCancelled
            }
        }
        call.cancel()
        #expect(await call.value)
    }

    /// Past retention, answered keys and keys left running go; a key an unfinished order needs stays.
    static func prunesKeys(on backend: StoreBackend) async throws {
        try await backend.withStore { store in try await prunesKeys(in: store) }
    }

    /// ``prunesKeys(on:)`` in `store`.
    private static func prunesKeys(in store: OrderStore) async throws {
        let old = Self.epoch, recent = Self.epoch + OrderStore.answerRetention
        for key in ["answered", "abandoned", "unfinished", "finished", "young"] {
            _ = try await store.claim(userID: "u1", key: key, requestHash: "h", now: key == "young" ? recent : old)
        }
        try await store.answer(userID: "u1", key: "answered", with: StoredAnswer(order: nil, error: nil))
        // "abandoned": a crash left it running with no order. "unfinished": its order is stuck
        // at "charged" (recovery stores its answer once the upstream is back). "finished": its
        // order is done but its answer was never stored.
        try await store.insertClaimed(Self.order("o1", user: "u1", key: "unfinished", step: "charged"), now: old)
        try await store.insertClaimed(Self.order("o2", user: "u1", key: "finished", step: "done"), now: old)

        try await store.pruneAnswers(now: recent + 1)
        #expect(try await Self.keys(in: store) == ["u1/unfinished", "u1/young"])
    }

    /// A running key without an order is freed only once claimed at or before the cutoff; on
    /// PostgreSQL even the start-up cutoff spares young keys (other replicas are serving).
    static func keepsYoungKeys(on backend: StoreBackend) async throws {
        try await backend.withStore { store in try await keepsYoungKeys(in: store) }
    }

    /// ``keepsYoungKeys(on:)`` in `store`.
    private static func keepsYoungKeys(in store: OrderStore) async throws {
        let now = Self.epoch + 100_000
        _ = try await store.claim(userID: "u1", key: "old", requestHash: "h", now: now - OrderStore.abandonedKeyAge - 1)
        _ = try await store.claim(userID: "u1", key: "young", requestHash: "h", now: now - 1)
        #expect(try await store.freeAbandonedKeys(claimedBy: store.abandonedKeyCutoff(atStartUp: false, now: now)) == 1)
        #expect(try await Self.keys(in: store) == ["u1/young"])
        let startUp = store.abandonedKeyCutoff(atStartUp: true, now: now)
        let freedAtStartUp = try await store.freeAbandonedKeys(claimedBy: startUp)
        #expect(freedAtStartUp == (store.database.dialect == .sqlite ? 1 : 0))
    }
}
