import Contracts
import Storage

/// The search index (`products_fts`, see `CatalogSchema` migration 2) and the spelling
/// suggestions drawn from its vocabulary.
extension CatalogStore {
    /// The most misspelt words a query may have and still get a suggestion: a query with more
    /// words that match nothing is not a typo, and each costs a pass over the vocabulary.
    static let maximumCorrectedWords = 3

    /// A query that finds nothing, corrected: `words` with each word that matches no product
    /// replaced by the closest word of the catalog — or nil when no word is misspelt, one has no
    /// close word, or the corrected query (with `category`) still finds nothing.
    func suggestion(for words: [String], category: String?) async throws -> String? {
        try await database.read { connection in
            var misspelt: [Int] = []
            for (position, word) in words.enumerated() where !SearchText.containsCJK(word) {
                let expression = SearchQuery.expression(for: [word]) ?? ""
                guard try connection.queryOne("SELECT 1 FROM products_fts WHERE products_fts MATCH ? LIMIT 1", [expression]) == nil
                else { continue }
                misspelt.append(position)
                if misspelt.count > Self.maximumCorrectedWords { return nil }
            }
            guard !misspelt.isEmpty else { return nil }
            let vocabulary = try Self.vocabulary(near: misspelt.map { words[$0] }, on: connection)
            var corrected = words
            for position in misspelt {
                guard let correction = SearchSuggestion.correction(for: words[position], among: vocabulary) else { return nil }
                corrected[position] = correction
            }
            let filter = ProductFilter(category: category, search: SearchQuery.expression(for: corrected), sort: .relevance)
            return try Self.count(filter, on: connection) > 0 ? corrected.joined(separator: " ") : nil
        }
    }

    /// The index's words whose length is within the allowed edits of one of `words`, with the
    /// number of products holding each. This reads the whole vocabulary (in SQLite, filtered by
    /// length there): bounded by the catalog's distinct words, not by the products or the
    /// queries, and only for a query that found nothing.
    static func vocabulary(near words: [String], on connection: Connection) throws -> [SearchSuggestion.Term] {
        // A term is close only within the allowed edits of the shorter of it and the word, so
        // never shorter than the shortest word less its edits, nor longer than the longest plus.
        let shortestWord = words.map(\.count).min() ?? 0
        let longestWord = words.map(\.count).max() ?? 0
        let shortest = shortestWord - EditDistance.allowedEdits(between: shortestWord, and: shortestWord)
        let longest = longestWord + EditDistance.allowedEdits(between: longestWord, and: longestWord)
        return try connection.query(
            "SELECT term, doc FROM products_vocabulary WHERE length(term) BETWEEN ? AND ?", [shortest, longest]
        ).compactMap { row in
            let term: String = try row.value(at: 0)
            return SearchText.containsCJK(term) ? nil : SearchSuggestion.Term(word: term, products: try row.value(at: 1))
        }
    }

    /// Writes a product's title and description into the search index, replacing what it held
    /// for `id`. Every write of a product's text goes through `write(_:on:)`, which calls this;
    /// a deleted product leaves the index by trigger.
    static func indexForSearch(id: Int, title: String, description: String, on connection: Connection) throws {
        try connection.execute("DELETE FROM products_fts WHERE rowid = ?", [id])
        try connection.execute(
            "INSERT INTO products_fts (rowid, title, description) VALUES (?, ?, ?)",
            [id, SearchText.indexForm(of: title), SearchText.indexForm(of: description)])
    }

    /// Empties the search index and fills it again from every product.
    static func rebuildSearchIndex(on connection: Connection) throws {
        try connection.execute("DELETE FROM products_fts")
        for row in try connection.query("SELECT id, title, description FROM products") {
            try indexForSearch(id: try row.value(at: 0), title: try row.value(at: 1), description: try row.value(at: 2), on: connection)
        }
    }
}
