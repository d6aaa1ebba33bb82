import ServiceKit
import Storage

/// The ledger of the built-in `TestPaymentProcessor`: one charge per order id.
extension OrderStore {
    /// A charge in the ledger.
    struct TestCharge: Sendable, Hashable {
        /// `charged`, `declined` or `refunded`.
        var status: String
        /// Why it was declined, if it was.
        var declineReason: String?
    }

    /// The charge of `orderID`, or nil when there is none.
    func testCharge(orderID: String) async throws -> TestCharge? {
        try await database.read { connection in
            try connection.queryOne("SELECT status, decline_reason FROM test_charges WHERE order_id = ?", [orderID]).map {
                TestCharge(status: try $0.value(at: 0), declineReason: try $0.value(at: 1))
            }
        }
    }

    /// Records the outcome of charging `orderID`, unless one is recorded already; returns the
    /// recorded charge (the earlier one when it existed: charging is idempotent per order).
    func recordTestCharge(
        orderID: String, amount: Int, currency: String, brand: String, last4: String, charge: TestCharge,
        now: Int64 = Timestamp.now()
    ) async throws -> TestCharge {
        try await database.write { connection in
            try connection.execute(
                """
                INSERT INTO test_charges (order_id, amount, currency, brand, last4, status, decline_reason, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (order_id) DO NOTHING
                """, [orderID, amount, currency, brand, last4, charge.status, charge.declineReason, now])
            let row = try connection.queryOne(
                "SELECT status, decline_reason FROM test_charges WHERE order_id = ?", [orderID])
            return TestCharge(status: try row?.value(at: 0) ?? charge.status, declineReason: try row?.value(at: 1))
        }
    }

    /// Marks the charge of `orderID` refunded; whether there was a charge to refund.
    func refundTestCharge(orderID: String, now: Int64 = Timestamp.now()) async throws -> Bool {
        try await database.write { connection in
            try connection.execute(
                "UPDATE test_charges SET status = 'refunded', refunded_at = ? WHERE order_id = ? AND status = 'charged'",
                [now, orderID]) == 1
        }
    }
}
