import Contracts
import Storage

/// Stock reservations for orders: all or nothing, idempotent per reservation id.
extension CatalogStore {
    /// What a reservation attempt led to.
    enum ReservationOutcome: Sendable, Equatable {
        /// The stock is taken (now, or by an earlier call with the same id).
        case reserved
        /// These products do not exist; nothing was taken.
        case unknownProducts([Int])
        /// These products have too little stock (each with what is left and what was
        /// wanted), by product id; nothing was taken.
        case outOfStock([StockShortage])
    }

    /// Takes `counts` (product id → count) from stock under `reservationID`, in one
    /// transaction; a reservation id seen before answers `.reserved` without taking more.
    ///
    /// Replicas racing for the same stock or the same id stay exact: on SQLite one write runs
    /// at a time; on PostgreSQL the write is `SERIALIZABLE`, so of two that read the same stock
    /// (or both found the id unused) one fails to commit and runs again, seeing the other's
    /// result, and `stock >= 0` is checked by the table besides.
    func reserve(reservationID: String, counts: [Int: Int]) async throws -> ReservationOutcome {
        let now = Self.now()
        let items = counts.sorted(by: { $0.key < $1.key })
        return try await writeProducts(items.map(\.key)) { connection in
            if try connection.queryValue("SELECT 1 FROM reservations WHERE id = ?", [reservationID], as: Int.self) != nil {
                return .reserved
            }
            var unknown: [Int] = []
            var short: [StockShortage] = []
            for (productID, count) in items {
                guard let stock = try connection.queryValue("SELECT stock FROM products WHERE id = ?", [productID], as: Int.self)
                else {
                    unknown.append(productID)
                    continue
                }
                if stock < count { short.append(StockShortage(productId: productID, available: stock, wanted: count)) }
            }
            if !unknown.isEmpty { return .unknownProducts(unknown) }
            if !short.isEmpty { return .outOfStock(short) }
            try connection.execute("INSERT INTO reservations (id, created_at) VALUES (?, ?)", [reservationID, now])
            // In product order, as every reservation takes its rows: no two wait on each other.
            for (productID, count) in items {
                try connection.execute("UPDATE products SET stock = stock - ? WHERE id = ?", [count, productID])
                try connection.execute(
                    "INSERT INTO reservation_items (reservation_id, product_id, count) VALUES (?, ?, ?)",
                    [reservationID, productID, count])
            }
            return .reserved
        }
    }

    /// Gives back the stock of `reservationID` once; unknown or released ids change nothing.
    /// Products deleted since are skipped. Returns whether this call gave the stock back.
    @discardableResult
    func release(reservationID: String) async throws -> Bool {
        let now = Self.now()
        // The products are the reservation's, read in the write: every answer is dropped.
        return try await writeProducts(nil) { connection in
            let changed = try connection.execute(
                "UPDATE reservations SET released_at = ? WHERE id = ? AND released_at IS NULL", [now, reservationID])
            guard changed == 1 else { return false }
            try connection.execute(
                """
                UPDATE products SET stock = stock + (
                    SELECT count FROM reservation_items WHERE reservation_id = ? AND product_id = products.id)
                WHERE id IN (SELECT product_id FROM reservation_items WHERE reservation_id = ?)
                """, [reservationID, reservationID])
            return true
        }
    }
}
