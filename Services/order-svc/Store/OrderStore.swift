import Contracts
import Foundation
import RPC
import ServiceKit
import Storage

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

/// The SQL of order-svc: orders here, idempotency keys and the test ledger in extensions.
/// Nothing else in the service writes SQL. Thread-safe (`Sendable`).
final class OrderStore: Sendable {
    /// The database.
    let database: Database

    /// Wraps an open database whose migrations are `OrderSchema.migrations`.
    init(database: Database) {
        self.database = database
    }

    /// Opens (creating and migrating) the database at `path` with `synchronous=FULL`.
    static func open(location: DatabaseLocation) async throws -> OrderStore {
        OrderStore(
            database: try await Database(
                location: location, options: DatabaseOptions(synchronous: .full),
                migrations: Migrations(sqlite: OrderSchema.migrations, postgresql: OrderSchema.postgreSQLMigrations)))
    }

    /// Writes a new `PENDING` order at step `priced`, and ties its idempotency key to it.
    func insert(_ record: OrderRecord, now: Int64 = Timestamp.now()) async throws {
        let order = record.order
        let items = try Self.json(order.items)
        let address = try Self.json(order.shippingAddress)
        try await database.write { connection in
            try connection.execute(
                """
                INSERT INTO orders (id, user_id, status, step, items_json, total_amount, currency, address_json,
                                    card_brand, card_last4, basket_version, idempotency_key, created_at, updated_at,
                                    sequence)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, (SELECT coalesce(max(sequence), 0) + 1 FROM orders))
                """,
                [
                    order.id, record.userID, order.status.rawValue, record.step, items, order.total.amount,
                    order.total.currency, address, order.payment?.brand, order.payment?.last4, record.basketVersion,
                    record.idempotencyKey, now, now,
                ])
            try connection.execute(
                "UPDATE idempotency_keys SET order_id = ? WHERE user_id = ? AND key = ?",
                [order.id, record.userID, record.idempotencyKey])
        }
    }

    /// Moves an order to `step` (and `status`, when given).
    func advance(orderID: String, to step: String, status: OrderStatus? = nil, now: Int64 = Timestamp.now()) async throws {
        try await database.write { connection in
            try connection.execute(
                "UPDATE orders SET step = ?, status = coalesce(?, status), updated_at = ? WHERE id = ?",
                [step, status?.rawValue, now, orderID])
        }
    }

    /// Removes an order that never got past reserving stock.
    func remove(orderID: String) async throws {
        try await database.write { connection in
            try connection.execute("DELETE FROM orders WHERE id = ?", [orderID])
        }
    }

    /// The order `id` if it belongs to `userID` (nil for someone else's).
    func order(id: String, userID: String? = nil) async throws -> OrderRecord? {
        try await database.read { connection in
            guard let row = try connection.queryOne("SELECT \(Self.columns) FROM orders WHERE id = ?", [id]) else {
                return nil
            }
            let record = try Self.record(from: row)
            if let userID, record.userID != userID { return nil }
            return record
        }
    }

    /// Up to `limit` orders of `userID` older than sequence `before`, newest first, and the
    /// position to continue from when there may be more.
    func orders(userID: String, before: Int64?, limit: Int) async throws -> ([Order], next: Int64?) {
        try await database.read { connection in
            let rows = try connection.query(
                "SELECT \(Self.columns) FROM orders WHERE user_id = ? AND sequence < ? AND step <> 'priced' AND step <> 'reserved' ORDER BY sequence DESC LIMIT ?",
                [userID, before ?? Int64.max, limit + 1])
            let orders = try rows.prefix(limit).map { try Self.record(from: $0).order }
            let next = rows.count > limit ? try rows[limit - 1].value(at: 14, as: Int64.self) : nil
            return (orders, next)
        }
    }

    /// Orders stuck at one of `steps` (for recovery), oldest first.
    func orders(atSteps steps: [String]) async throws -> [OrderRecord] {
        try await database.read { connection in
            let marks = steps.map { _ in "?" }.joined(separator: ", ")
            return try connection.query(
                "SELECT \(Self.columns) FROM orders WHERE step IN (\(marks)) ORDER BY sequence", steps
            ).map(Self.record(from:))
        }
    }

    // MARK: Rows

    /// The order columns, in the order `record(from:)` reads them.
    static let columns =
        "id, user_id, status, step, items_json, total_amount, currency, address_json, card_brand, card_last4, basket_version, idempotency_key, created_at, updated_at, sequence"

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
