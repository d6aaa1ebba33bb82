import Contracts
import Foundation
import Storage

/// The SQL of catalog-svc: products here; listing in `CatalogStore+Listing.swift`, favorites
/// and stock in their own extensions. Nothing else in the service writes SQL.
///
/// Thread-safe (`Sendable`): every method runs on the database's own threads.
final class CatalogStore: Sendable {
    /// The database.
    let database: Database
    /// The words of the search index that spelling suggestions are drawn from, kept between
    /// writes of products' text (each of which forgets it).
    let searchVocabulary = SearchVocabulary()

    /// The product columns, in the order `product(from:)` reads them.
    static let productColumns =
        "p.id, p.title, p.description, p.category, p.price_amount, p.currency, p.image, p.rating_rate, p.rating_count, p.stock"

    /// Wraps an open database whose migrations are `CatalogSchema.migrations`.
    init(database: Database) {
        self.database = database
    }

    /// Opens (creating and migrating) the database at `path`.
    static func open(location: DatabaseLocation) async throws -> CatalogStore {
        CatalogStore(
            database: try await Database(
                location: location, options: DatabaseOptions(synchronous: .full),
                migrations: Migrations(sqlite: CatalogSchema.migrations, postgresql: CatalogSchema.postgreSQLMigrations)))
    }

    /// Loads `products` unless a seed was loaded before (so deleting products never brings it
    /// back); returns whether it loaded them.
    @discardableResult
    func seedIfNeeded(with products: [Product]) async throws -> Bool {
        defer { searchVocabulary.forget() }
        return try await database.write { connection in
            guard try connection.queryValue("SELECT value FROM catalog_meta WHERE key = 'seeded'", as: String.self) == nil
            else { return false }
            for product in products { try Self.write(product, on: connection) }
            try connection.execute("INSERT INTO catalog_meta (key, value) VALUES ('seeded', ?)", ["\(products.count)"])
            return true
        }
    }

    /// The product with `id`, or nil.
    func product(id: Int) async throws -> Product? {
        try await database.read { connection in try Self.product(id: id, on: connection) }
    }

    /// The products with these ids, by id; unknown ids are absent.
    func products(ids: [Int]) async throws -> [Int: Product] {
        guard !ids.isEmpty else { return [:] }
        return try await database.read { connection in
            let placeholders = Array(repeating: "?", count: ids.count).joined(separator: ", ")
            let rows = try connection.query(
                "SELECT \(Self.productColumns) FROM products p WHERE p.id IN (\(placeholders))", ids)
            var found: [Int: Product] = [:]
            for row in rows {
                let product = try Self.product(from: row)
                found[product.id] = product
            }
            return found
        }
    }

    /// Every category with its number of products, by name.
    func categories() async throws -> [Category] {
        try await database.read { connection in
            try connection.query(
                "SELECT category, count(*) FROM products GROUP BY category COLLATE NOCASE ORDER BY category COLLATE NOCASE"
            ).map { Category(name: try $0.value(at: 0), productCount: try $0.value(at: 1)) }
        }
    }

    /// Creates or replaces `product`: id 0 takes a new id. Returns the stored product and
    /// whether it was created.
    func upsert(_ product: Product) async throws -> (Product, created: Bool) {
        defer { searchVocabulary.forget() }
        return try await database.write { connection in try Self.upsert(product, on: connection) }
    }

    /// Upserts a batch in one transaction; returns how many were created and updated.
    func upsert(batch products: [Product]) async throws -> (created: Int, updated: Int) {
        defer { searchVocabulary.forget() }
        return try await database.write { connection in
            var created = 0
            for product in products where try Self.upsert(product, on: connection).created { created += 1 }
            return (created, products.count - created)
        }
    }

    /// Deletes the product (and, by cascade, every favorite of it); whether it existed.
    func delete(id: Int) async throws -> Bool {
        defer { searchVocabulary.forget() }
        return try await database.write { connection in
            try connection.execute("DELETE FROM products WHERE id = ?", [id]) == 1
        }
    }

    // MARK: Shared SQL

    /// Creates or replaces `product` on `connection`.
    static func upsert(_ product: Product, on connection: Connection) throws -> (Product, created: Bool) {
        var stored = product
        let exists =
            try product.id > 0
            && connection.queryValue("SELECT 1 FROM products WHERE id = ?", [product.id], as: Int.self) != nil
        if product.id == 0 {
            // Above every id ever used, not just the present ones: a deleted product's id is never
            // given to another (favorites, reservations and caches elsewhere may still name it).
            // Ids past ProductValidation.maximumID (only from before that rule) are left out: one at
            // Int64.max made `+ 1` a REAL and every later creation failed.
            stored.id = Int(
                try connection.queryValue(
                    """
                    SELECT max(coalesce((SELECT max(id) FROM products WHERE id <= ?1), 0),
                               coalesce((SELECT CAST(value AS INTEGER) FROM catalog_meta
                                         WHERE key = 'last_id' AND CAST(value AS INTEGER) <= ?1), 0)) + 1
                    """, [ProductValidation.maximumID], as: Int64.self) ?? 1)
        }
        try write(stored, on: connection)
        return (stored, !exists)
    }

    /// Inserts or replaces the row of `product` (its id set) and its words in the search index,
    /// and raises the high-water mark of ids.
    static func write(_ product: Product, on connection: Connection) throws {
        try connection.execute(
            """
            INSERT INTO catalog_meta (key, value) VALUES ('last_id', ?)
            ON CONFLICT (key) DO UPDATE SET value = max(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))
            """, [product.id])
        try connection.execute(
            """
            INSERT INTO products (id, title, description, category, price_amount, currency, image, rating_rate,
                                  rating_count, stock, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET
                title = excluded.title, description = excluded.description, category = excluded.category,
                price_amount = excluded.price_amount, currency = excluded.currency, image = excluded.image,
                rating_rate = excluded.rating_rate, rating_count = excluded.rating_count, stock = excluded.stock,
                updated_at = excluded.updated_at
            """,
            [
                product.id, product.title, product.description, product.category, product.price.amount,
                product.price.currency, product.image, product.rating.rate, product.rating.count, product.stock,
                Int64(Date().timeIntervalSince1970),
            ])
        try indexForSearch(id: product.id, title: product.title, description: product.description, on: connection)
    }

    /// The product with `id` on `connection`, or nil.
    static func product(id: Int, on connection: Connection) throws -> Product? {
        try connection.queryOne("SELECT \(productColumns) FROM products p WHERE p.id = ?", [id]).map(product(from:))
    }

    /// A product from a row whose first columns are `productColumns`.
    static func product(from row: Row) throws -> Product {
        Product(
            id: try row.value(at: 0), title: try row.value(at: 1), description: try row.value(at: 2),
            category: try row.value(at: 3), price: Money(amount: try row.value(at: 4), currency: try row.value(at: 5)),
            image: try row.value(at: 6), rating: Rating(rate: try row.value(at: 7), count: try row.value(at: 8)),
            stock: try row.value(at: 9))
    }
}
