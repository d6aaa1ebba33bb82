import Storage
import Testing

@testable import order_svc

/// The SQLite schema's indexes serve the statements every PlaceOrder runs, so that a call's
/// cost does not grow with the orders already placed.
@Suite struct OrderSchemaTests {
    /// A new order's `sequence` (read inside the write that inserts it) is found through
    /// `orders_sequence`: without it, SQLite reads max(sequence) by scanning every order.
    @Test func newOrderSequenceIsReadThroughItsIndex() async throws {
        let database = try await Database(path: ":memory:", migrations: OrderSchema.migrations)
        let plan = try await database.read { connection in
            try connection.query("EXPLAIN QUERY PLAN SELECT \(OrderStore.nextSequence(.sqlite))")
                .map { try $0.value(named: "detail", as: String.self) }
        }
        await database.close()
        #expect(plan.contains { $0.contains("orders_sequence") }, "plan: \(plan)")
    }
}
