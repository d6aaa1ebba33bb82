import Contracts
import Foundation
import Storage
import Telemetry

/// The SQL of catalog-svc: products here; listing in `CatalogStore+Listing.swift`, favorites
/// and stock in their own extensions. Nothing else in the service writes SQL.
///
/// The same SQL serves SQLite and PostgreSQL where it can; where the dialects differ, the
/// statement switches on `connection.dialect` (or `database.dialect`) with both texts side by
/// side. On PostgreSQL every write runs at `SERIALIZABLE` and is run again on a conflict, so
/// the write closures compute time outside and have no effect but their SQL.
///
/// Thread-safe (`Sendable`): every method runs on the database's own threads.
final class CatalogStore: Sendable {
    /// The database.
    let database: Database
    /// The words of the search index that spelling suggestions are drawn from, kept while the
    /// products' text stays at the version they were read at (`catalog_meta`'s
    /// `search_version`, which every write of a product's text, by any replica, raises).
    let searchVocabulary = SearchVocabulary()
    /// Encoded answers of the reads shoppers repeat, which every product write here
    /// invalidates (`writeProducts`); nil on PostgreSQL, where other replicas write too.
    let answers: CatalogAnswerCache?

    /// The product columns, in the order `product(from:)` reads them.
    static let productColumns =
        "p.id, p.title, p.description, p.category, p.price_amount, p.currency, p.image, p.rating_rate, p.rating_count, p.stock"

    /// Wraps an open database whose migrations are `CatalogSchema.migrations` (SQLite) or
    /// `CatalogSchema.postgreSQLMigrations`; with `keepsAnswers`, on SQLite, keeps the answers
    /// of repeated reads (`answers`).
    init(database: Database, keepsAnswers: Bool = true) {
        self.database = database
        answers = keepsAnswers && database.dialect == .sqlite ? CatalogAnswerCache() : nil
    }

    /// `database.write` for a write that changes the products `ids` (nil: any product): their
    /// cached answers and every listing's are dropped once it has ended, committed or not,
    /// before it returns.
    func writeProducts<T: Sendable>(_ ids: [Int]?, _ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        defer { answers?.invalidate(ids) }
        return try await database.write(body)
    }

    /// Opens (creating and migrating) the database at `location`; its queries and transactions
    /// are recorded in `metrics`, when given.
    static func open(location: DatabaseLocation, metrics: MetricsRegistry? = nil, keepsAnswers: Bool = true) async throws -> CatalogStore {
        CatalogStore(
            database: try await Database(
                location: location, options: DatabaseOptions(synchronous: .full, metrics: metrics),
                migrations: Migrations(sqlite: CatalogSchema.migrations, postgresql: CatalogSchema.postgreSQLMigrations)),
            keepsAnswers: keepsAnswers)
    }

    /// Loads `products` unless a seed was loaded before (so deleting products never brings it
    /// back); returns whether it loaded them.
    @discardableResult
    func seedIfNeeded(with products: [Product]) async throws -> Bool {
        let now = Self.now()
        return try await writeProducts(nil) { connection in
            guard try connection.queryValue("SELECT value FROM catalog_meta WHERE key = 'seeded'", as: String.self) == nil
            else { return false }
            for product in products { try Self.write(product, updatedAt: now, on: connection) }
            try connection.execute("INSERT INTO catalog_meta (key, value) VALUES ('seeded', ?)", ["\(products.count)"])
            return true
        }
    }

    /// The product with `id`, or nil: a short read (a lookup by key), answered on the event loop.
    func product(id: Int) async throws -> Product? {
        try await database.shortRead { connection in try Self.product(id: id, on: connection) }
    }

    /// `product(id:)` without suspending, when the calling event loop can read it right here
    /// (`Database.shortReadNow`); nil when it must be read in a task.
    func productNow(id: Int) -> Result<Product?, any Error>? {
        database.shortReadNow { connection in try Self.product(id: id, on: connection) }
    }

    /// The products with these ids, by id; unknown ids are absent. A short read: at most
    /// `CatalogContract.maxBatchSize` lookups by key.
    func products(ids: [Int]) async throws -> [Int: Product] {
        guard !ids.isEmpty else { return [:] }
        return try await database.shortRead { connection in
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

    /// Every category with its number of products, by name: names that differ only in the
    /// case of ASCII letters are one category, named by its byte-wise first spelling.
    /// Not a short read: one pass over every product, which grows with the catalog.
    func categories() async throws -> [Category] {
        try await database.read { connection in
            let sql =
                switch connection.dialect {
                case .sqlite:
                    "SELECT min(category), count(*) FROM products GROUP BY category COLLATE NOCASE ORDER BY category COLLATE NOCASE"
                case .postgresql:
                    """
                    SELECT min(category), count(*) FROM products
                    GROUP BY lower(category COLLATE "C") ORDER BY lower(category COLLATE "C")
                    """
                }
            return try connection.query(sql).map { Category(name: try $0.value(at: 0), productCount: try $0.value(at: 1)) }
        }
    }

    /// Creates or replaces `product`: id 0 takes a new id. Returns the stored product and
    /// whether it was created.
    func upsert(_ product: Product) async throws -> (Product, created: Bool) {
        let now = Self.now()
        return try await writeProducts([product.id]) { connection in try Self.upsert(product, updatedAt: now, on: connection) }
    }

    /// Upserts a batch in one transaction; returns how many were created and updated.
    func upsert(batch products: [Product]) async throws -> (created: Int, updated: Int) {
        let now = Self.now()
        return try await writeProducts(products.map(\.id)) { connection in
            var created = 0
            for product in products where try Self.upsert(product, updatedAt: now, on: connection).created { created += 1 }
            return (created, products.count - created)
        }
    }

    /// Deletes the product (and, by cascade, every favorite of it); whether it existed.
    func delete(id: Int) async throws -> Bool {
        try await writeProducts([id]) { connection in
            guard try connection.execute("DELETE FROM products WHERE id = ?", [id]) == 1 else { return false }
            try Self.raiseSearchVersion(on: connection)
            return true
        }
    }

    // MARK: Shared SQL

    /// The time now, in whole seconds since 1970, as the tables store it. Taken before a write
    /// begins: a write may run more than once (PostgreSQL), and it is the time of the call.
    static func now() -> Int64 {
        Int64(Date().timeIntervalSince1970)
    }

    /// Creates or replaces `product` on `connection`, stamped `updatedAt`.
    static func upsert(_ product: Product, updatedAt: Int64, on connection: Connection) throws -> (Product, created: Bool) {
        var stored = product
        let exists =
            try product.id > 0
            && connection.queryValue("SELECT 1 FROM products WHERE id = ?", [product.id], as: Int.self) != nil
        if product.id == 0 {
            // Above every id ever used, not just the present ones: a deleted product's id is never
            // given to another (favorites, reservations and caches elsewhere may still name it).
            // Ids past ProductValidation.maximumID (only from before that rule) are left out: one at
            // Int64.max made `+ 1` a REAL and every later creation failed.
            let highest = try connection.queryOne(
                """
                SELECT coalesce((SELECT max(id) FROM products WHERE id <= ?), 0),
                       coalesce((SELECT CAST(value AS BIGINT) FROM catalog_meta WHERE key = 'last_id'), 0)
                """, [ProductValidation.maximumID])
            let present: Int = try highest?.value(at: 0) ?? 0
            let everUsed: Int = try highest?.value(at: 1) ?? 0
            stored.id = max(present, everUsed <= ProductValidation.maximumID ? everUsed : 0) + 1
        }
        try write(stored, updatedAt: updatedAt, on: connection)
        return (stored, !exists)
    }

    /// Inserts or replaces the row of `product` (its id set) and its words in the search index,
    /// and raises the high-water mark of ids.
    static func write(_ product: Product, updatedAt: Int64, on connection: Connection) throws {
        try connection.execute(
            """
            INSERT INTO catalog_meta (key, value) VALUES ('last_id', ?)
            ON CONFLICT (key) DO UPDATE SET value = CASE
                WHEN CAST(catalog_meta.value AS BIGINT) >= CAST(excluded.value AS BIGINT) THEN catalog_meta.value
                ELSE excluded.value END
            """, [String(product.id)])
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
                updatedAt,
            ])
        try indexForSearch(id: product.id, title: product.title, description: product.description, on: connection)
        try raiseSearchVersion(on: connection)
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
