import Contracts
import Storage
import Synchronization

/// The search index (`products_fts`, see `CatalogSchema` migration 2; `products_search` on
/// PostgreSQL) and the spelling suggestions drawn from its vocabulary.
extension CatalogStore {
    /// The search index's SQL in one dialect: FTS5's `products_fts` on SQLite, the `tsvector`
    /// of `products_search` (queried with `to_tsquery` under the configuration
    /// `catalog_search`) on PostgreSQL. Both take the same words and find the same products
    /// (the differences are listed in the service's README).
    struct SearchIndex {
        /// The dialect of the SQL.
        let dialect: SQLDialect

        /// The index of `dialect`.
        init(_ dialect: SQLDialect) {
            self.dialect = dialect
        }

        /// The join that brings each listed product's (`p`) entry of the index into a listing.
        var join: String {
            switch dialect {
            case .sqlite: "JOIN products_fts ON products_fts.rowid = p.id"
            case .postgresql: "JOIN products_search s ON s.product_id = p.id"
            }
        }

        /// The condition, in a listing with ``join``, that the product matches the query bound
        /// to its `?` (``query(for:titleOnly:)``).
        var matches: String {
            switch dialect {
            case .sqlite: "products_fts MATCH ?"
            case .postgresql: "s.document @@ to_tsquery('catalog_search', ?)"
            }
        }

        /// The relevance rank of a product (`p`) in a listing with ``join``: 0 when its title
        /// matches the title-only query bound to its `?`, else 1.
        var titleRank: String {
            switch dialect {
            case .sqlite: "(p.id NOT IN (SELECT rowid FROM products_fts WHERE products_fts MATCH ?))"
            case .postgresql: "(CASE WHEN s.document @@ to_tsquery('catalog_search', ?) THEN 0 ELSE 1 END)"
            }
        }

        /// Whether any product matches the query bound to its `?`.
        var anyMatch: String {
            switch dialect {
            case .sqlite: "SELECT 1 FROM products_fts WHERE products_fts MATCH ? LIMIT 1"
            case .postgresql: "SELECT 1 FROM products_search WHERE document @@ to_tsquery('catalog_search', ?) LIMIT 1"
            }
        }

        /// The query requiring every one of `words` (not empty), in the title alone when
        /// `titleOnly`: an FTS5 expression, or a `tsquery` text.
        func query(for words: [String], titleOnly: Bool) -> String {
            switch dialect {
            case .sqlite:
                let expression = SearchQuery.expression(for: words) ?? ""
                return titleOnly ? "title : (\(expression))" : expression
            case .postgresql:
                return SearchQuery.tsQuery(for: words, titleOnly: titleOnly) ?? ""
            }
        }
    }

    /// The most misspelt words a query may have and still get a suggestion: a query with more
    /// words that match nothing is not a typo, and each costs a pass over the vocabulary.
    static let maximumCorrectedWords = 3

    /// A query that finds nothing, corrected: `words` with each word that matches no product
    /// replaced by the closest word of the catalog — or nil when no word is misspelt, one has no
    /// close word, or the corrected query (with `category`) still finds nothing.
    func suggestion(for words: [String], category: String?) async throws -> String? {
        try await database.read { connection in
            let index = SearchIndex(connection.dialect)
            var misspelt: [Int] = []
            for (position, word) in words.enumerated() where !SearchText.containsCJK(word) {
                guard try connection.queryOne(index.anyMatch, [index.query(for: [word], titleOnly: false)]) == nil
                else { continue }
                misspelt.append(position)
                if misspelt.count > Self.maximumCorrectedWords { return nil }
            }
            guard !misspelt.isEmpty else { return nil }
            let vocabulary = try self.searchVocabulary.terms(at: try Self.searchVersion(on: connection)) {
                try Self.vocabulary(on: connection)
            }
            var corrected = words
            for position in misspelt {
                guard let correction = SearchSuggestion.correction(for: words[position], among: vocabulary) else { return nil }
                corrected[position] = correction
            }
            let filter = ProductFilter(category: category, search: corrected, sort: .relevance)
            return try Self.count(filter, on: connection) > 0 ? corrected.joined(separator: " ") : nil
        }
    }

    /// Whether searches keep accents (`cafe` does not find `café`): on PostgreSQL when the
    /// extension `unaccent` could not be created (see `CatalogSchema.createSearchConfiguration`).
    func searchKeepsAccents() async throws -> Bool {
        try await database.read { connection in
            try connection.queryValue("SELECT value FROM catalog_meta WHERE key = 'search_accents'", as: String.self) == "kept"
        }
    }

    /// The version of the products' text: raised by every write of it (``raiseSearchVersion(on:)``),
    /// 0 before the first.
    static func searchVersion(on connection: Connection) throws -> Int64 {
        try connection.queryValue("SELECT value FROM catalog_meta WHERE key = 'search_version'", as: String.self)
            .flatMap { Int64($0) } ?? 0
    }

    /// Raises the version of the products' text, in the transaction that changes it: a
    /// replica's kept vocabulary then no longer matches, whichever replica wrote.
    static func raiseSearchVersion(on connection: Connection) throws {
        try connection.execute(
            """
            INSERT INTO catalog_meta (key, value) VALUES ('search_version', '1')
            ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(catalog_meta.value AS BIGINT) + 1 AS TEXT)
            """)
    }

    /// Every word of the index but CJK ones, with the number of products holding each. Bounded
    /// by the catalog's distinct words, not by the products or the queries; read once and kept
    /// in ``searchVocabulary`` until the products' text changes.
    static func vocabulary(on connection: Connection) throws -> [SearchSuggestion.Term] {
        let sql =
            switch connection.dialect {
            case .sqlite: "SELECT term, doc FROM products_vocabulary"
            case .postgresql: "SELECT word, ndoc FROM ts_stat('SELECT document FROM products_search')"
            }
        return try connection.query(sql).compactMap { row in
            let term: String = try row.value(at: 0)
            return SearchText.containsCJK(term) ? nil : SearchSuggestion.Term(word: term, products: try row.value(at: 1))
        }
    }

    /// Writes a product's title and description into the search index, replacing what it held
    /// for `id`. Every write of a product's text goes through `write(_:on:)`, which calls this;
    /// a deleted product leaves the index by trigger.
    ///
    /// FTS5 cuts the index form (`SearchText.indexForm`) into tokens itself; PostgreSQL is
    /// given the tokens (`SearchText.tokenForm`), the title's with weight `A`, the
    /// description's `B`.
    static func indexForSearch(id: Int, title: String, description: String, on connection: Connection) throws {
        switch connection.dialect {
        case .sqlite:
            try connection.execute("DELETE FROM products_fts WHERE rowid = ?", [id])
            try connection.execute(
                "INSERT INTO products_fts (rowid, title, description) VALUES (?, ?, ?)",
                [id, SearchText.indexForm(of: title), SearchText.indexForm(of: description)])
        case .postgresql:
            try connection.execute(
                """
                INSERT INTO products_search (product_id, document)
                VALUES (?, setweight(to_tsvector('catalog_search', ?), 'A') || setweight(to_tsvector('catalog_search', ?), 'B'))
                ON CONFLICT (product_id) DO UPDATE SET document = excluded.document
                """, [id, SearchText.tokenForm(of: title), SearchText.tokenForm(of: description)])
        }
    }

    /// Empties the search index and fills it again from every product.
    static func rebuildSearchIndex(on connection: Connection) throws {
        switch connection.dialect {
        case .sqlite: try connection.execute("DELETE FROM products_fts")
        case .postgresql: try connection.execute("DELETE FROM products_search")
        }
        for row in try connection.query("SELECT id, title, description FROM products") {
            try indexForSearch(id: try row.value(at: 0), title: try row.value(at: 1), description: try row.value(at: 2), on: connection)
        }
    }
}

/// The search index's words, read once and kept while the products' text stays at the version
/// they were read at, so a search that finds nothing — anyone can send one — costs a pass over
/// the words in memory (mostly a length comparison each), not a walk of the whole index.
///
/// Thread-safe: the words live behind a `Mutex`. The version (`catalog_meta`'s
/// `search_version`) lives in the database and is read in the same transaction as the words,
/// so words kept in one replica are dropped when any replica changes a product's text, and
/// words read at an older version never replace newer ones.
final class SearchVocabulary: Sendable {
    /// The words kept, with the version they were read at.
    private let kept = Mutex<(version: Int64, terms: [SearchSuggestion.Term])?>(nil)

    /// The words at `version`: the kept ones when they were read at it, else those `read`
    /// returns (read in the transaction `version` comes from), kept unless newer ones are.
    func terms(at version: Int64, read: () throws -> [SearchSuggestion.Term]) rethrows -> [SearchSuggestion.Term] {
        if let current = kept.withLock({ $0 }), current.version == version { return current.terms }
        let terms = try read()
        kept.withLock { kept in
            if (kept?.version ?? .min) <= version { kept = (version, terms) }
        }
        return terms
    }
}
