import Contracts
import Storage
import Synchronization

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
            let vocabulary = try self.searchVocabulary.terms { try Self.vocabulary(on: connection) }
            var corrected = words
            for position in misspelt {
                guard let correction = SearchSuggestion.correction(for: words[position], among: vocabulary) else { return nil }
                corrected[position] = correction
            }
            let filter = ProductFilter(category: category, search: SearchQuery.expression(for: corrected), sort: .relevance)
            return try Self.count(filter, on: connection) > 0 ? corrected.joined(separator: " ") : nil
        }
    }

    /// Every word of the index but CJK ones, with the number of products holding each. Bounded
    /// by the catalog's distinct words, not by the products or the queries; read once and kept
    /// in ``searchVocabulary`` until a product's text changes.
    static func vocabulary(on connection: Connection) throws -> [SearchSuggestion.Term] {
        try connection.query("SELECT term, doc FROM products_vocabulary").compactMap { row in
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

/// The search index's words, read once and kept until a write of products' text forgets them,
/// so a search that finds nothing — anyone can send one — costs a pass over the words in
/// memory (mostly a length comparison each), not a walk of the whole index.
///
/// Thread-safe: the words live behind a `Mutex`. A read that began before a write finished
/// does not keep what it read: each `forget()` starts a new generation, and only words read
/// within the current generation are kept.
final class SearchVocabulary: Sendable {
    private struct State {
        var generation = 0
        var terms: [SearchSuggestion.Term]?
    }

    private let state = Mutex(State())

    /// The words: the kept ones, or those `read` returns (kept unless a write came meanwhile).
    func terms(read: () throws -> [SearchSuggestion.Term]) rethrows -> [SearchSuggestion.Term] {
        let generation: Int
        do {
            let current = state.withLock { ($0.generation, $0.terms) }
            if let terms = current.1 { return terms }
            generation = current.0
        }
        let terms = try read()
        state.withLock { if $0.generation == generation { $0.terms = terms } }
        return terms
    }

    /// Forgets the words: a product's text changed.
    func forget() {
        state.withLock {
            $0.generation += 1
            $0.terms = nil
        }
    }
}
