import Contracts
import Foundation
import Storage
import Testing

@testable import order_svc

/// Several replicas of order-svc on one database: an idempotency key claimed by exactly one
/// call, an unfinished order leased to exactly one replica (`OrderStore+Leases.swift`). Each
/// check is written once for either backend; the tests here run it on SQLite (stores sharing
/// one `Database`), `OrderStorePostgreSQLLiveTests` on PostgreSQL (a `Database` per replica).
@Suite("OrderStore: replicas sharing a database")
struct ReplicaStoreTests {
    @Test("50 concurrent PlaceOrder claims of one key over two replicas: one is claimed and makes the one order")
    func concurrentClaims() async throws {
        try await Self.claimsOneKeyOnce(on: .sqlite)
    }

    @Test("a lease keeps other replicas' recovery off an order until it expires; its owner may claim it again")
    func leases() async throws {
        try await Self.honoursLeases(on: .sqlite)
    }

    @Test("two recoverers claiming every pending order at once: each order is claimed once")
    func concurrentRecoveryClaims() async throws {
        try await Self.claimsEachPendingOrderOnce(on: .sqlite)
    }

    @Test("two recovery passes over the same list settle each charged order once")
    func concurrentRecoveryPasses() async throws {
        try await Self.settlesEachOrderOnce(on: .sqlite)
    }

    /// What a claim found, as text (`KeyClaim` has an answer that is not comparable here).
    static func outcome(_ claim: OrderStore.KeyClaim) -> String {
        switch claim {
        case .claimed: "claimed"
        case .answered: "answered"
        case .reused: "reused"
        case .inProgress: "inProgress"
        }
    }

    /// 50 concurrent claims of one key, alternating between two replicas; each that wins
    /// writes its order, as PlaceOrder does.
    static func claimsOneKeyOnce(on backend: StoreBackend) async throws {
        try await backend.withStores(count: 2) { stores in
            let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
                for call in 0..<50 {
                    let store = stores[call % stores.count]
                    group.addTask {
                        let claim = try await store.claim(userID: "u1", key: "shared-key", requestHash: "h")
                        if case .claimed = claim {
                            let id = UUID().uuidString.lowercased()
                            try await store.insertClaimed(IdempotencyStoreTests.order(id, user: "u1", key: "shared-key", step: "priced"))
                        }
                        return outcome(claim)
                    }
                }
                var outcomes: [String: Int] = [:]
                for try await outcome in group { outcomes[outcome, default: 0] += 1 }
                return outcomes
            }
            #expect(outcomes == ["claimed": 1, "inProgress": 49])
            let orders = try await stores[0].database.read { connection in
                try connection.queryValue("SELECT count(*) FROM orders WHERE idempotency_key = 'shared-key'", as: Int.self)
            }
            #expect(orders == 1)
        }
    }

    /// A placed order's lease (taken by the insert) against another replica's recovery.
    static func honoursLeases(on backend: StoreBackend) async throws {
        try await backend.withStores(count: 2) { stores in
            let (owner, other) = (stores[0], stores[1])
            let epoch = IdempotencyStoreTests.epoch
            let steps = OrderService.unfinishedSteps
            try await owner.insertClaimed(IdempotencyStoreTests.order("o1", user: "u1", key: "k1", step: "priced"), now: epoch)
            let early = epoch + OrderStore.leaseDuration - 1
            #expect(try await other.ordersToRecover(atSteps: steps, now: early).isEmpty)
            #expect(try await owner.ordersToRecover(atSteps: steps, now: early).map(\.order.id) == ["o1"])
            #expect(try await other.claimForRecovery(orderID: "o1", atSteps: steps, now: early) == nil)
            #expect(try await owner.claimForRecovery(orderID: "o1", atSteps: steps, now: early)?.step == "priced")
            // The owner's claim renewed the lease: still not the other's just after the first would have run out.
            #expect(try await other.claimForRecovery(orderID: "o1", atSteps: steps, now: early + 2) == nil)
            // The owner dies: its lease runs out and the other replica takes the order over.
            let expired = early + OrderStore.leaseDuration + 1
            #expect(try await other.ordersToRecover(atSteps: steps, now: expired).map(\.order.id) == ["o1"])
            #expect(try await other.claimForRecovery(orderID: "o1", atSteps: steps, now: expired)?.order.id == "o1")
            #expect(try await owner.claimForRecovery(orderID: "o1", atSteps: steps, now: expired) == nil)
            // A finished order is nobody's to recover.
            try await other.advance(orderID: "o1", to: "done", now: expired)
            #expect(try await other.claimForRecovery(orderID: "o1", atSteps: steps, now: expired + 1) == nil)
        }
    }

    /// Two replicas claim each of several pending orders (their leases expired) at once.
    static func claimsEachPendingOrderOnce(on backend: StoreBackend) async throws {
        try await backend.withStores(count: 2) { stores in
            let epoch = IdempotencyStoreTests.epoch
            let ids = (0..<10).map { "pending-\($0)" }
            for id in ids {
                try await stores[0].insertClaimed(IdempotencyStoreTests.order(id, user: "u1", key: id, step: "reserved"), now: epoch)
            }
            let now = epoch + OrderStore.leaseDuration + 1
            let claims = try await withThrowingTaskGroup(of: String?.self) { group in
                for store in stores {
                    for id in ids {
                        group.addTask {
                            try await store.claimForRecovery(orderID: id, atSteps: OrderService.unfinishedSteps, now: now)?.order.id
                        }
                    }
                }
                var claims: [String] = []
                for try await claim in group { if let claim { claims.append(claim) } }
                return claims
            }
            #expect(claims.sorted() == ids.sorted())
        }
    }

    /// Two replicas run a recovery pass over the same list of orders stuck at `charged`
    /// (which recovery completes without upstream calls): together they settle each once.
    static func settlesEachOrderOnce(on backend: StoreBackend) async throws {
        try await backend.withStores(count: 2) { stores in
            let epoch = IdempotencyStoreTests.epoch
            var listed: [OrderRecord] = []
            for index in 0..<10 {
                let record = IdempotencyStoreTests.order("charged-\(index)", user: "u1", key: "k\(index)", step: "charged")
                try await stores[0].insertClaimed(record, now: epoch)
                listed.append(record)
            }
            let services = try stores.map(RecoverySnapshotTests.service)
            let list = listed
            let settled = await withTaskGroup(of: Int.self) { group in
                for service in services {
                    group.addTask { await service.recover(listed: list) }
                }
                return await group.reduce(0, +)
            }
            #expect(settled == listed.count)
            for record in listed {
                #expect(try await stores[1].order(id: record.order.id)?.step == "done")
            }
        }
    }
}
