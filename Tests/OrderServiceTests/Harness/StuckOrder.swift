import Contracts
import Foundation
import RPC
import ServiceTestSupport

/// An order as a crash of order-svc leaves it: a row of `orders` at a step between
/// reservation and payment (Services/order-svc/Store/OrderSchema.swift), its idempotency key
/// still `running`, and optionally the test processor's charge — written straight into the
/// database while order-svc is down.
struct StuckOrder: Sendable {
    /// The order id, which is also the catalog reservation id.
    let id = UUID().uuidString.lowercased()
    /// The owner.
    let userID: String
    /// The idempotency key of the PlaceOrder call that was interrupted.
    let key = "crashed-\(UUID().uuidString)"
    /// `reserved` (stock taken, not charged yet) or `charged` (money taken, not recorded PAID).
    let step: String
    /// The lines, priced.
    let items: [OrderItem]
    /// Whether the test processor's ledger holds a successful charge for the order.
    let isCharged: Bool

    /// The lines as catalog-svc's `ReserveStock` takes them.
    var reservation: [StockReservationItem] {
        items.map { StockReservationItem(productId: $0.productId, count: $0.count) }
    }

    /// The sum of the line totals.
    var total: Int { items.reduce(0) { $0 + $1.lineTotal.amount } }

    /// The currency of the lines.
    var currency: String { items.first?.unitPrice.currency ?? "USD" }

    /// An order of `count` units of `product` at its current price.
    init(of product: Product, count: Int, for shopper: Shopper, step: String, isCharged: Bool) {
        userID = shopper.userID
        self.step = step
        self.isCharged = isCharged
        items = [
            OrderItem(
                productId: product.id, productTitle: product.title, unitPrice: product.price, count: count,
                lineTotal: product.price.multiplied(by: count))
        ]
    }

    /// The statements that write the order, its key and (when charged) its ledger entry;
    /// `sequence` is the SQL of the order's ListOrders position (``OrderDatabase/nextSequence()``).
    func insertStatements(sequence: String, now: Int64 = Int64(Date().timeIntervalSince1970)) throws -> String {
        let quote = OrderDatabase.quote
        let itemsJSON = String(decoding: try JSONCodec.shared.encode(items), as: UTF8.self)
        let addressJSON = String(decoding: try JSONCodec.shared.encode(Address.sample), as: UTF8.self)
        var sql = """
            INSERT INTO orders (id, user_id, status, step, items_json, total_amount, currency, address_json,
                                card_brand, card_last4, basket_version, idempotency_key, created_at, updated_at, sequence)
            VALUES (\(quote(id)), \(quote(userID)), 'PENDING', \(quote(step)), \(quote(itemsJSON)), \(total), \(quote(currency)), \(quote(addressJSON)),
                    'visa', '4242', 1, \(quote(key)), \(now), \(now), \(sequence));
            INSERT INTO idempotency_keys (user_id, key, request_hash, state, answer_json, order_id, created_at)
            VALUES (\(quote(userID)), \(quote(key)), 'planted-by-test', 'running', NULL, \(quote(id)), \(now));
            """
        if isCharged {
            sql += """

                INSERT INTO test_charges (order_id, amount, currency, brand, last4, status, decline_reason, created_at)
                VALUES (\(quote(id)), \(total), \(quote(currency)), 'visa', '4242', 'charged', NULL, \(now));
                """
        }
        return sql
    }
}
