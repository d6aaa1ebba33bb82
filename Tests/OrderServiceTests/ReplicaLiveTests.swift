import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing

/// Two order-svc processes sharing the stack's PostgreSQL database, as replicas behind a
/// balancer: idempotency keys and recovery hold across them (order-svc README, Storage). Only
/// on PostgreSQL: a SQLite file belongs to one process.
@Suite("order-svc replicas (live)", .enabled(if: TestBackend.isPostgreSQL, "replicas share a PostgreSQL database"))
struct ReplicaLiveTests {
    @Test("50 concurrent PlaceOrders with one key spread over two replicas make one order and one charge")
    func concurrentCallsOverReplicas() async throws {
        try await withLiveOrderStack { stack in
            try await withSecondReplica(of: stack) { replica in
                try await IdempotencyTests.expectOneOrder(
                    fromConcurrentCallsVia: [try stack.client(.order), replica.client], in: stack)
            }
        }
    }

    @Test("a replica starting beside a running one recovers a stuck order under its lease, once")
    func stuckOrderRecoveredOnce() async throws {
        try await withLiveOrderStack { stack in
            let shopper = try await stack.newShopper()
            let product = try await stack.product(4)
            let stuck = StuckOrder(of: product, count: 1, for: shopper, step: "charged", isCharged: true)
            let database = OrderDatabase(stack)
            try await database.execute(try stuck.insertStatements(sequence: try await database.nextSequence()))
            // A new replica recovers at start-up; the stack's own does every 30 s.
            try await withSecondReplica(of: stack) { replica in
                let completed = await eventually(within: .seconds(10), every: .milliseconds(100)) {
                    (try? await stack.order(stuck.id, as: shopper))?.status == .paid
                }
                #expect(completed, "recovery did not complete the order:\n\(replica.log.tail())")
                let owners = try await database.rows(
                    "SELECT recovery_owner IS NOT NULL FROM orders WHERE id = \(OrderDatabase.quote(stuck.id))")
                #expect(owners == [["t"]])
                #expect(try await database.chargeCount() == 1)
                let lines = replica.log.lines + (try stack.service(.order).log.lines)
                #expect(lines.filter { $0.contains("recovered order") && $0.contains(stuck.id) }.count == 1)
            }
        }
    }

    /// Runs `body` with another order-svc process on `stack`'s database and data directory
    /// (whose keys — request hashes, page tokens — replicas must share), stopped afterwards.
    /// It takes no slot of `serviceProcessSlots`: the stack holds its own already, and a second
    /// wait while holding them can deadlock (the slots go to waiters in arrival order, and
    /// stacks waiting for four each would never let it through).
    private func withSecondReplica(of stack: OrderStack, _ body: (ServiceProcess) async throws -> Void) async throws {
        let url = try #require(try await stack.databaseURL())
        let replica = try await ServiceProcess.launch(
            "order-svc",
            arguments: [
                "--port", "0", "--data-dir", stack.dataDirectory(.order).path, "--log-level", "info",
                "--grace-seconds", "2", "--auth-addr", try stack.address(of: .auth),
                "--catalog-addr", try stack.address(of: .catalog), "--basket-addr", try stack.address(of: .basket),
            ],
            environment: ["SHOP_INTERNAL_API_KEY": stack.internalKey, "SHOP_DATABASE_URL": url])
        let outcome: Result<Void, any Error>
        do { outcome = .success(try await body(replica)) } catch { outcome = .failure(error) }
        await replica.closeClient()
        _ = await replica.stop()
        try outcome.get()
    }
}
