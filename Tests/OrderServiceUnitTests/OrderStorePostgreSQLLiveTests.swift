import Contracts
import ServiceTestSupport
import Storage
import Testing

@testable import order_svc

/// The order store's checks on PostgreSQL (a fresh database on the test server each,
/// `PostgreSQLServer.withDatabase`): the same checks the in-memory suites run on SQLite, and
/// the replicas' — several `Database`s, as several order-svc processes, on one database.
@Suite("OrderStore on PostgreSQL")
struct OrderStorePostgreSQLLiveTests {
    @Test("a replica that is gone (its sessions ended, as when it is killed) loses its order-less keys within seconds, its orders when their leases run out")
    func goneReplicaTakenOver() async throws {
        try await PostgreSQLServer.withDatabase { url in
            let location = DatabaseLocation.postgresql(url: url, schema: "orders")
            let dying = try await OrderStore.open(location: location)
            let other = try await OrderStore.open(location: location)
            let epoch = IdempotencyStoreTests.epoch
            let steps = OrderService.unfinishedSteps
            #expect(ReplicaStoreTests.outcome(try await dying.claim(userID: "u1", key: "with-order", requestHash: "h", now: epoch)) == "claimed")
            try await dying.insert(IdempotencyStoreTests.order("o1", user: "u1", key: "with-order", step: "reserved"), now: epoch)
            #expect(ReplicaStoreTests.outcome(try await dying.claim(userID: "u1", key: "no-order", requestHash: "h", now: epoch)) == "claimed")
            let soon = epoch + OrderStore.goneOwnerGrace + 1

            // Alive, its key is its own.
            #expect(ReplicaStoreTests.outcome(try await other.claim(userID: "u1", key: "no-order", requestHash: "h", now: soon)) == "inProgress")
            #expect(try await other.freeAbandonedKeys(claimedBy: epoch - 1, now: soon) == 0)

            // Its process ends: its sessions leave pg_stat_activity.
            await dying.database.close()
            try await Task.sleep(for: .milliseconds(200))
            // Not before the grace after the claim; then the key is the next call's at once.
            #expect(ReplicaStoreTests.outcome(try await other.claim(userID: "u1", key: "no-order", requestHash: "h", now: epoch + 1)) == "inProgress")
            #expect(ReplicaStoreTests.outcome(try await other.claim(userID: "u1", key: "no-order", requestHash: "h", now: soon)) == "claimed")
            // Its order waits for its lease: a live owner may only look gone.
            #expect(try await other.claimForRecovery(orderID: "o1", atSteps: steps, now: soon) == nil)
            let expired = epoch + OrderStore.leaseDuration + 1
            #expect(try await other.claimForRecovery(orderID: "o1", atSteps: steps, now: expired)?.order.id == "o1")
            await other.database.close()
        }
    }

    @Test("a live replica judged gone cannot overwrite the claim taken over from it, nor charge an order whose lease it lost")
    func fencedWhenJudgedGone() async throws {
        try await PostgreSQLServer.withDatabase { url in
            let location = DatabaseLocation.postgresql(url: url, schema: "orders")
            // Alive, but with no application_name: it looks gone to the others.
            let invisible = OrderStore(
                database: try await Database(
                    location: location, migrations: Migrations(sqlite: [], postgresql: OrderSchema.postgreSQLMigrations)),
                replicaID: "invisible-replica")
            let other = try await OrderStore.open(location: location)
            let epoch = IdempotencyStoreTests.epoch
            #expect(ReplicaStoreTests.outcome(try await invisible.claim(userID: "u1", key: "k", requestHash: "h", now: epoch)) == "claimed")
            let soon = epoch + OrderStore.goneOwnerGrace + 1
            #expect(ReplicaStoreTests.outcome(try await other.claim(userID: "u1", key: "k", requestHash: "h", now: soon)) == "claimed")
            try await other.insert(IdempotencyStoreTests.order("taker", user: "u1", key: "k", step: "priced"), now: soon)
            // The first claimant goes on to write its order: refused, nothing written.
            await #expect(throws: OrderStore.KeyTakenOver.self) {
                try await invisible.insert(IdempotencyStoreTests.order("late", user: "u1", key: "k", step: "priced"), now: soon)
            }
            #expect(try await other.order(id: "late", userID: "u1") == nil)
            let tied = try await other.database.read { try $0.queryValue("SELECT order_id FROM idempotency_keys WHERE key = 'k'", as: String.self) }
            #expect(tied == "taker")

            // An order whose lease ran out and was taken by recovery: its first owner may not charge it.
            #expect(ReplicaStoreTests.outcome(try await invisible.claim(userID: "u2", key: "k2", requestHash: "h", now: epoch)) == "claimed")
            try await invisible.insert(IdempotencyStoreTests.order("o2", user: "u2", key: "k2", step: "reserved"), now: epoch)
            #expect(try await invisible.renewLease(orderID: "o2", now: epoch + 5))
            let expired = epoch + 5 + OrderStore.leaseDuration + 1
            #expect(try await other.claimForRecovery(orderID: "o2", atSteps: OrderService.unfinishedSteps, now: expired) != nil)
            #expect(try await !invisible.renewLease(orderID: "o2", now: expired))
            await invisible.database.close()
            await other.database.close()
        }
    }

    @Test("keys a crash left running without an order are freed; keys with an order stay for recovery")
    func freeAbandoned() async throws {
        try await IdempotencyStoreTests.freesAbandonedKeys(on: .postgresql)
    }

    @Test("a key claimed later than the cutoff stays, even at start-up: other replicas are serving")
    func youngKeysStay() async throws {
        try await IdempotencyStoreTests.keepsYoungKeys(on: .postgresql)
    }

    @Test("an answer that removes its pending order does both in one step, and only for an order still pending")
    func answerRemovingOrder() async throws {
        try await IdempotencyStoreTests.answersRemovingOrder(on: .postgresql)
    }

    @Test("past retention: answered keys and keys left running go; a key an unfinished order still needs stays")
    func pruneKeys() async throws {
        try await IdempotencyStoreTests.prunesKeys(on: .postgresql)
    }

    @Test("an order listed at reserved but paid since is left alone by recovery")
    func paidSinceListed() async throws {
        try await RecoverySnapshotTests.leavesOrdersPaidSinceListed(on: .postgresql)
    }

    @Test("discarding removes only an order still pending")
    func discardKeepsFinishedOrders() async throws {
        try await RecoverySnapshotTests.discardsOnlyPendingOrders(on: .postgresql)
    }

    @Test("50 concurrent claims of one key over two replicas: one is claimed and makes the one order")
    func concurrentClaims() async throws {
        try await ReplicaStoreTests.claimsOneKeyOnce(on: .postgresql)
    }

    @Test("a lease keeps the other replica's recovery off an order until it expires")
    func leases() async throws {
        try await ReplicaStoreTests.honoursLeases(on: .postgresql)
    }

    @Test("two replicas claiming every pending order at once: each order is claimed once")
    func concurrentRecoveryClaims() async throws {
        try await ReplicaStoreTests.claimsEachPendingOrderOnce(on: .postgresql)
    }

    @Test("two replicas' recovery passes over the same list settle each charged order once")
    func concurrentRecoveryPasses() async throws {
        try await ReplicaStoreTests.settlesEachOrderOnce(on: .postgresql)
    }
}
