import Contracts
import Foundation
import RPC
import ServiceKit
import Storage
import Telemetry

/// An order as stored, with the step PlaceOrder or CancelOrder reached.
struct OrderRecord: Sendable, Hashable {
    /// The order as API.md's message.
    var order: Order
    /// The owner.
    var userID: String
    /// How far the work got: `priced`, `reserved`, `charged`, `done`, `cancelling`.
    var step: String
    /// The basket version the order was priced from.
    var basketVersion: Int
    /// The idempotency key of the PlaceOrder call that made it.
    var idempotencyKey: String
}

/// The SQL of order-svc: orders here, idempotency keys, recovery leases and the test ledger in
/// extensions. Nothing else in the service writes SQL. Thread-safe (`Sendable`).
///
/// One text serves SQLite and PostgreSQL wherever it can; where the dialects differ, the
/// statement switches on `connection.dialect` with both texts side by side. On PostgreSQL
/// several replicas share the tables, and a write runs at `SERIALIZABLE`, re-run from the start
/// on a conflict (`Database.write`): every read-check-write below (claiming a key, claiming an
/// order's lease) therefore sees every write committed before it by any replica, exactly as
/// under SQLite's one writer, and the write closures take their ids and times from outside.
final class OrderStore: Sendable {
    /// The database.
    let database: Database
    /// This process's name in `orders.recovery_owner` (see `OrderStore+Leases.swift`).
    let replicaID: String

    /// Wraps an open database whose migrations are `OrderSchema`'s; `replicaID` names this
    /// process in the leases it takes (by default ``defaultReplicaID(for:)``).
    init(database: Database, replicaID: String? = nil) {
        self.database = database
        self.replicaID = replicaID ?? Self.defaultReplicaID(for: database.dialect)
    }

    /// Opens (creating and migrating) the database at `location`; SQLite with `synchronous=FULL`.
    /// On PostgreSQL every connection is named after the process's replica id
    /// (``applicationName(of:)``), which is how other replicas tell it still runs. Its queries
    /// and transactions are recorded in `metrics`, when given.
    static func open(location: DatabaseLocation, metrics: MetricsRegistry? = nil) async throws -> OrderStore {
        let replicaID = defaultReplicaID(for: location.dialect)
        return OrderStore(
            database: try await Database(
                location: location,
                options: DatabaseOptions(synchronous: .full, applicationName: applicationName(of: replicaID), metrics: metrics),
                migrations: Migrations(sqlite: OrderSchema.migrations, postgresql: OrderSchema.postgreSQLMigrations)),
            replicaID: replicaID)
    }

    /// Writes a new `PENDING` order at step `priced`, leased to this process (so no other
    /// replica's recovery takes it while the call works on it), and ties its idempotency key
    /// to it.
    func insert(_ record: OrderRecord, now: Int64 = Timestamp.now()) async throws {
        let order = record.order
        let items = try Self.json(order.items)
        let address = try Self.json(order.shippingAddress)
        let owner = replicaID
        let leaseEnd = now + Self.leaseDuration
        try await database.write { connection in
            try connection.execute(
                """
                INSERT INTO orders (id, user_id, status, step, items_json, total_amount, currency, address_json,
                                    card_brand, card_last4, basket_version, idempotency_key, created_at, updated_at,
                                    recovery_owner, lease_until, sequence)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, \(Self.nextSequence(connection.dialect)))
                """,
                [
                    order.id, record.userID, order.status.rawValue, record.step, items, order.total.amount,
                    order.total.currency, address, order.payment?.brand, order.payment?.last4, record.basketVersion,
                    record.idempotencyKey, now, now, owner, leaseEnd,
                ])
            // Fenced on this process's claim: a claim another replica took over (this one was
            // judged gone) is not overwritten, and the order is not written at all.
            let tied = try connection.execute(
                """
                UPDATE idempotency_keys SET order_id = ?
                WHERE user_id = ? AND key = ? AND order_id IS NULL AND (claimed_by = ? OR claimed_by IS NULL)
                """,
                [order.id, record.userID, record.idempotencyKey, owner])
            guard tied == 1 else { throw KeyTakenOver() }
        }
    }

    /// The idempotency key this call claimed was taken over by another replica's call with
    /// the key (this process was judged gone): the other call answers it; this one must stop
    /// before any side effect.
    struct KeyTakenOver: Error {}

    /// The `sequence` of a new order (ListOrders' newest-first position). SQLite: one more
    /// than the largest, safe under its one writer. PostgreSQL: the column's identity — with
    /// the maximum, every two concurrent PlaceOrders of any users would conflict at
    /// `SERIALIZABLE` and one would be re-run.
    static func nextSequence(_ dialect: SQLDialect) -> String {
        switch dialect {
        case .sqlite: "(SELECT coalesce(max(sequence), 0) + 1 FROM orders)"
        case .postgresql: "DEFAULT"
        }
    }

    /// Moves an order to `step` (and `status`, when given), renewing this process's lease on it.
    func advance(orderID: String, to step: String, status: OrderStatus? = nil, now: Int64 = Timestamp.now()) async throws {
        let owner = replicaID
        try await database.write { connection in
            try Self.advance(orderID, to: step, status: status, owner: owner, now: now, on: connection)
        }
    }

    /// The statement of ``advance(orderID:to:status:now:)``, for writes that move an order
    /// together with other changes.
    static func advance(
        _ orderID: String, to step: String, status: OrderStatus?, owner: String, now: Int64, on connection: Connection
    ) throws {
        try connection.execute(
            """
            UPDATE orders SET step = ?, status = coalesce(CAST(? AS TEXT), status), updated_at = ?,
                              recovery_owner = ?, lease_until = ?
            WHERE id = ?
            """, [step, status?.rawValue, now, owner, now + leaseDuration, orderID])
    }

    /// Removes an order that never got past reserving stock.
    func remove(orderID: String) async throws {
        try await database.write { connection in
            try connection.execute("DELETE FROM orders WHERE id = ?", [orderID])
        }
    }

    /// The order `id` if it belongs to `userID` (nil for someone else's): a short read (by key).
    func order(id: String, userID: String? = nil) async throws -> OrderRecord? {
        try await database.shortRead { connection in
            guard let row = try connection.queryOne("SELECT \(Self.columns) FROM orders WHERE id = ?", [id]) else {
                return nil
            }
            let record = try Self.record(from: row)
            if let userID, record.userID != userID { return nil }
            return record
        }
    }

    /// Up to `limit` orders of `userID` older than sequence `before`, newest first, and the
    /// position to continue from when there may be more. A short read (a page of an index).
    func orders(userID: String, before: Int64?, limit: Int) async throws -> ([Order], next: Int64?) {
        try await database.shortRead { connection in
            let rows = try connection.query(
                "SELECT \(Self.columns) FROM orders WHERE user_id = ? AND sequence < ? AND step <> 'priced' AND step <> 'reserved' ORDER BY sequence DESC LIMIT ?",
                [userID, before ?? Int64.max, limit + 1])
            let orders = try rows.prefix(limit).map { try Self.record(from: $0).order }
            let next = rows.count > limit ? try rows[limit - 1].value(at: 14, as: Int64.self) : nil
            return (orders, next)
        }
    }

    // MARK: Rows

    /// The order columns, in the order `record(from:)` reads them.
    static let columns =
        "id, user_id, status, step, items_json, total_amount, currency, address_json, card_brand, card_last4, basket_version, idempotency_key, created_at, updated_at, sequence"

    /// The record a row of ``columns`` holds.
    static func record(from row: Row) throws -> OrderRecord {
        let brand = try row.value(at: 8, as: String?.self)
        let last4 = try row.value(at: 9, as: String?.self)
        let order = Order(
            id: try row.value(at: 0), status: OrderStatus(rawValue: try row.value(at: 2)) ?? .pending,
            items: try JSONCodec.shared.decode([OrderItem].self, from: Data((try row.value(at: 4, as: String.self)).utf8)),
            total: Money(amount: try row.value(at: 5), currency: try row.value(at: 6)),
            shippingAddress: try JSONCodec.shared.decode(Address.self, from: Data((try row.value(at: 7, as: String.self)).utf8)),
            payment: brand.flatMap { brand in last4.map { PaymentSummary(brand: brand, last4: $0) } },
            createdAt: Timestamp.rfc3339(try row.value(at: 12)), updatedAt: Timestamp.rfc3339(try row.value(at: 13)))
        return OrderRecord(
            order: order, userID: try row.value(at: 1), step: try row.value(at: 3), basketVersion: try row.value(at: 10),
            idempotencyKey: try row.value(at: 11))
    }

    /// `value` as JSON text.
    static func json(_ value: some Encodable) throws -> String {
        String(decoding: try JSONCodec.shared.encode(value), as: UTF8.self)
    }
}
