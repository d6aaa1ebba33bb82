import Contracts
import Storage

/// Favorites: per user, newest first.
extension CatalogStore {
    /// Marks `productID` a favorite of `userID`; false when the product does not exist.
    /// Adding it again changes nothing (idempotent).
    func addFavorite(userID: String, productID: Int) async throws -> Bool {
        let now = Self.now()
        return try await database.write { connection in
            guard try connection.queryValue("SELECT 1 FROM products WHERE id = ?", [productID], as: Int.self) != nil
            else { return false }
            try connection.execute(
                "INSERT INTO favorites (user_id, product_id, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                [userID, productID, now])
            return true
        }
    }

    /// Removes `productID` from the favorites of `userID`, if it is there.
    func removeFavorite(userID: String, productID: Int) async throws {
        try await database.write { connection in
            try connection.execute("DELETE FROM favorites WHERE user_id = ? AND product_id = ?", [userID, productID])
        }
    }

    /// Up to `limit` favorites of `userID` older than the favorite `before` (newest first), and
    /// the position to continue from when there may be more.
    func favorites(userID: String, before: Int64?, limit: Int) async throws -> ([Product], next: Int64?) {
        try await database.shortRead { connection in
            let rows = try connection.query(
                """
                SELECT \(Self.productColumns), f.id FROM favorites f JOIN products p ON p.id = f.product_id
                WHERE f.user_id = ? AND f.id < ? ORDER BY f.id DESC LIMIT ?
                """, [userID, before ?? Int64.max, limit + 1])
            let page = try rows.prefix(limit).map { try Self.product(from: $0) }
            let next = rows.count > limit ? try rows[limit - 1].value(at: 10, as: Int64.self) : nil
            return (page, next)
        }
    }
}
