import Foundation
import ServiceKit
import Storage

/// Leases on unfinished orders: which process works on an order, so that with several
/// replicas each pending order is driven — placed, cancelled or recovered — by exactly one.
///
/// Why a lease and not `SELECT … FOR UPDATE SKIP LOCKED`: settling an order spans upstream
/// calls (catalog-svc's `ReleaseStock`, the payment provider's refund) and several commits, and
/// a row lock lasts only as long as its transaction. Holding one across those calls would pin
/// a pooled connection and an open `SERIALIZABLE` transaction for seconds per order (which a
/// synchronous `Database.write` body cannot do anyway), and a PlaceOrder in flight holds no
/// transaction between its steps at all. A lease is two columns written in short transactions
/// instead: `recovery_owner` (the process's ``OrderStore/replicaID``) and `lease_until` (Unix
/// seconds). Writing an order's step — inserting it, ``OrderStore/advance(orderID:to:status:now:)``,
/// answering it — takes or renews the lease for the writer; recovery takes an order only when
/// its lease has expired or is its own (``OrderStore/claimForRecovery(orderID:atSteps:now:)``), one
/// order at a time. Claims of one order by two replicas are two writes of one row at
/// `SERIALIZABLE`: one commits, the other is re-run, sees the new lease and gets nothing. A
/// replica that dies mid-work loses its orders when their leases expire, and the next pass of
/// any replica takes them over (a retry meeting `REQUEST_IN_PROGRESS` starts one). Whether a
/// replica is gone is never taken from the server's sessions for an order: a live replica can
/// be without one for a while (the server restarted, a pooler in between), and an order taken
/// from a live owner could be charged and undone at once. Before charging, the owner renews
/// its lease only if it still holds it (``renewLease(orderID:now:)``), so a charge always
/// runs under a lease with its whole duration ahead. Within a process, `InFlightOrders` still keeps recovery off the
/// orders its own calls hold. Replicas' clocks must agree to well within ``leaseDuration``.
extension OrderStore {
    /// How long a lease lasts from its last renewal. Longer than any one step of placing,
    /// cancelling or settling an order can take (an upstream call is bounded by the call's
    /// deadline or 10 seconds), so a live owner renews it before it runs out; short enough that
    /// a shopper whose PlaceOrder died with its replica has the answer of a retry within about
    /// half a minute, and the stock the order held back.
    static let leaseDuration: Int64 = 30

    /// Whether other replicas may work on the same orders (PostgreSQL), so that one of them
    /// may die with orders in hand; on SQLite one process owns the file.
    var sharedByReplicas: Bool { database.dialect == .postgresql }

    /// The `application_name` of a replica's PostgreSQL connections.
    static func applicationName(of replicaID: String) -> String { "order-svc/\(replicaID)" }

    /// How long after a key's claim it may be taken over once its claimant is seen gone.
    static let goneOwnerGrace: Int64 = 10

    /// SQL true for a row whose owner in `column` is another replica that is gone — no
    /// connection of it left in the server's `pg_stat_activity`, as when its process died (the
    /// kernel closes its sockets, and the server ends their sessions) — and whose work was last
    /// touched at `touchedColumn` at least ``goneOwnerGrace`` before the time bound as its one
    /// parameter. Always false on SQLite, where one process owns the file and restarts take
    /// over at start-up. Used for keys claimed without an order only, where a wrong judgement
    /// (a live replica without a session for a while) is harmless: the claimant's order insert
    /// is fenced on its claim (``OrderStore/insert(_:now:)``) and fails before any side effect.
    static func ownerGone(_ column: String, touched touchedColumn: String, dialect: SQLDialect) -> String {
        switch dialect {
        case .sqlite:
            return "(CAST(? AS INTEGER) IS NULL AND 0)"
        case .postgresql:
            return """
                (\(column) IS NOT NULL AND \(touchedColumn) <= CAST(? AS BIGINT) AND \(column) NOT IN (
                    SELECT substr(application_name, \(applicationName(of: "").count + 1)) FROM pg_stat_activity
                    WHERE application_name LIKE '\(applicationName(of: ""))%'))
                """
        }
    }

    /// The owner name of a process that does not say: on SQLite one process owns the file, so
    /// every lease it finds at start-up is its own from before a restart (and recovery takes
    /// those orders at once, as without leases); on PostgreSQL a new name per process.
    static func defaultReplicaID(for dialect: SQLDialect) -> String {
        switch dialect {
        case .sqlite: "sole-process"
        case .postgresql: UUID().uuidString.lowercased()
        }
    }

    /// The orders at one of `steps` that this process could lease now (no live lease of
    /// another replica), oldest first: what a recovery pass goes through.
    func ordersToRecover(atSteps steps: [String], now: Int64 = Timestamp.now()) async throws -> [OrderRecord] {
        let marks = steps.map { _ in "?" }.joined(separator: ", ")
        let bindings: [(any DatabaseValueConvertible)?] = steps.map { $0 } + [now, replicaID]
        return try await database.read { connection in
            try connection.query(
                """
                SELECT \(Self.columns) FROM orders WHERE step IN (\(marks))
                    AND (lease_until IS NULL OR lease_until < ? OR recovery_owner = ?)
                ORDER BY sequence
                """, bindings
            ).map(Self.record(from:))
        }
    }

    /// Leases the order `orderID` to this process for recovery, if it is at one of `steps`
    /// and its lease has expired or is this process's; returns the order as it is now, or nil
    /// when it has moved on, is gone, or another live replica holds it.
    func claimForRecovery(orderID: String, atSteps steps: [String], now: Int64 = Timestamp.now()) async throws -> OrderRecord? {
        let marks = steps.map { _ in "?" }.joined(separator: ", ")
        let bindings: [(any DatabaseValueConvertible)?] =
            [replicaID, now + Self.leaseDuration, orderID] + steps.map { $0 } + [now, replicaID]
        return try await database.write { connection in
            try connection.queryOne(
                """
                UPDATE orders SET recovery_owner = ?, lease_until = ?
                WHERE id = ? AND step IN (\(marks))
                    AND (lease_until IS NULL OR lease_until < ? OR recovery_owner = ?)
                RETURNING \(Self.columns)
                """, bindings
            ).map(Self.record(from:))
        }
    }

    /// Renews this process's lease on the order `orderID` if it still holds it; false when
    /// another replica's recovery took the order (its lease ran out) or it is gone. Called
    /// right before a charge, so that no charge runs on an order another replica may undo.
    func renewLease(orderID: String, now: Int64 = Timestamp.now()) async throws -> Bool {
        let owner = replicaID
        return try await database.write { connection in
            try connection.execute(
                "UPDATE orders SET lease_until = ? WHERE id = ? AND recovery_owner = ?",
                [now + Self.leaseDuration, orderID, owner]) == 1
        }
    }
}
