import Testing

/// The order store's checks on PostgreSQL (a fresh database on the test server each,
/// `PostgreSQLServer.withDatabase`): the same checks the in-memory suites run on SQLite, and
/// the replicas' — several `Database`s, as several order-svc processes, on one database.
@Suite("OrderStore on PostgreSQL")
struct OrderStorePostgreSQLLiveTests {
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
