import Contracts
import Storage

/// `ListProducts`: filters, full-text search, the four sorts and keyset paging.
extension CatalogStore {
    /// What a listing asks for.
    struct ProductFilter: Sendable, Hashable {
        /// Only this category (the case of ASCII letters ignored), if given.
        var category: String?
        /// The words of the query (`SearchQuery.words(of:)`), if the listing searches; all must
        /// match, and none matches nothing.
        var search: [String]?
        /// The order.
        var sort: ProductSort
    }

    /// The position after a product in a listing: its sort-key values and id.
    struct ProductCursor: Codable, Sendable, Hashable {
        /// The sort-key values, in the order of the sort's keys.
        var keys: [Double]
        /// The product id (the last tie-breaker).
        var id: Int
    }

    /// A page of a listing.
    struct ProductPage: Sendable {
        /// The products, in order.
        var products: [Product]
        /// The position after the last one, when there may be more.
        var next: ProductCursor?
        /// How many products match the filter in all.
        var total: Int
    }

    /// The sort keys of `sort`: SQL expressions over the listing, each ascending or not; the
    /// id (ascending) breaks the last tie.
    ///
    /// Relevance ranks the products whose title holds every word of the query before those
    /// that match only through their description. It is deliberately not bm25: bm25 scores
    /// move whenever any product is added or removed, and a page token positioned on a score
    /// would then skip or repeat products; this rank depends on the product alone.
    static func sortKeys(for filter: ProductFilter, dialect: SQLDialect) -> [(expression: String, ascending: Bool)] {
        switch filter.sort {
        case .relevance:
            filter.search == nil ? [] : [(SearchIndex(dialect).titleRank, true)]
        case .priceAscending: [("p.price_amount", true)]
        case .priceDescending: [("p.price_amount", false)]
        case .rating: [("p.rating_rate", false), ("p.rating_count", false)]
        }
    }

    /// The bindings the sort keys' expressions need: the title-only search for relevance.
    static func sortKeyBindings(for filter: ProductFilter, dialect: SQLDialect) -> [(any DatabaseValueConvertible)?] {
        guard filter.sort == .relevance, let words = filter.search else { return [] }
        return [SearchIndex(dialect).query(for: words, titleOnly: true)]
    }

    /// Up to `limit` products of `filter` after `cursor`, and the total.
    func listProducts(_ filter: ProductFilter, after cursor: ProductCursor?, limit: Int) async throws -> ProductPage {
        if filter.search?.isEmpty == true { return ProductPage(products: [], next: nil, total: 0) }
        let dialect = database.dialect
        let keys = Self.sortKeys(for: filter, dialect: dialect)
        let (source, whereClause, bindings) = Self.selection(for: filter, dialect: dialect)
        let keyColumns = keys.enumerated().map { ", \($0.element.expression) AS k\($0.offset)" }.joined()
        let inner = "SELECT \(Self.productColumns)\(keyColumns) \(source)\(whereClause)"
        var outer = "SELECT * FROM (\(inner)) AS listing"
        var pageBindings = Self.sortKeyBindings(for: filter, dialect: dialect) + bindings
        if let cursor, cursor.keys.count == keys.count {
            let (condition, values) = Self.keysetCondition(keys: keys, cursor: cursor)
            outer += " WHERE \(condition)"
            pageBindings += values
        }
        let order = keys.enumerated().map { "k\($0.offset) \($0.element.ascending ? "ASC" : "DESC")" } + ["id ASC"]
        outer += " ORDER BY \(order.joined(separator: ", ")) LIMIT ?"
        pageBindings.append(limit + 1)
        let finalSQL = outer
        let finalBindings = pageBindings
        // A short read: a page of an index and a count, under the short-read budget (a
        // listing too big for it is run again in the reader pool).
        return try await database.shortRead { connection in
            let rows = try connection.query(finalSQL, finalBindings)
            let total = try Self.count(filter, on: connection)
            var products: [Product] = []
            var next: ProductCursor?
            for row in rows.prefix(limit) {
                let product = try Self.product(from: row)
                products.append(product)
                next = ProductCursor(
                    keys: try (0..<keys.count).map { try row.value(at: 10 + $0, as: Double.self) }, id: product.id)
            }
            return ProductPage(products: products, next: rows.count > limit ? next : nil, total: total)
        }
    }

    /// The products `filter` selects (its search words not empty): the `FROM` clause, the
    /// `WHERE` clause (or "") and the values it binds.
    static func selection(
        for filter: ProductFilter, dialect: SQLDialect
    ) -> (source: String, where: String, bindings: [(any DatabaseValueConvertible)?]) {
        var source = "FROM products p"
        var conditions: [String] = []
        var bindings: [(any DatabaseValueConvertible)?] = []
        if let words = filter.search {
            let index = SearchIndex(dialect)
            source += " " + index.join
            conditions.append(index.matches)
            bindings.append(index.query(for: words, titleOnly: false))
        }
        if let category = filter.category {
            // Equal but for the case of ASCII letters.
            switch dialect {
            case .sqlite: conditions.append("p.category = ? COLLATE NOCASE")
            case .postgresql: conditions.append(#"lower(p.category COLLATE "C") = lower(CAST(? AS text) COLLATE "C")"#)
            }
            bindings.append(category)
        }
        return (source, conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "), bindings)
    }

    /// How many products `filter` selects, on `connection`.
    static func count(_ filter: ProductFilter, on connection: Connection) throws -> Int {
        if filter.search?.isEmpty == true { return 0 }
        let (source, whereClause, bindings) = selection(for: filter, dialect: connection.dialect)
        return try connection.queryValue("SELECT count(*) \(source)\(whereClause)", bindings, as: Int.self) ?? 0
    }

    /// "After `cursor`" in the listing's order: lexicographic over the keys, then the id.
    static func keysetCondition(
        keys: [(expression: String, ascending: Bool)], cursor: ProductCursor
    ) -> (String, [(any DatabaseValueConvertible)?]) {
        var alternatives: [String] = []
        var values: [(any DatabaseValueConvertible)?] = []
        for position in 0...keys.count {
            var parts: [String] = []
            for earlier in 0..<position {
                parts.append("k\(earlier) = ?")
                values.append(keyBinding(cursor.keys[earlier]))
            }
            if position < keys.count {
                parts.append("k\(position) \(keys[position].ascending ? ">" : "<") ?")
                values.append(keyBinding(cursor.keys[position]))
            } else {
                parts.append("id > ?")
                values.append(cursor.id)
            }
            alternatives.append("(" + parts.joined(separator: " AND ") + ")")
        }
        return (alternatives.joined(separator: " OR "), values)
    }

    /// A cursor's sort-key value as bound: an integer when it is a whole number (a price, a
    /// count, the relevance rank), else the number. PostgreSQL types the parameter by the
    /// key's column, and a `bigint` parameter refuses `1999.0`; SQLite compares either alike.
    static func keyBinding(_ key: Double) -> any DatabaseValueConvertible {
        Int64(exactly: key) ?? key
    }
}
