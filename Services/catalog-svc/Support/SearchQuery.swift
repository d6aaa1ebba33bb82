/// Turns a shopper's `query` into an FTS5 expression (SQLite) or a `tsquery` (PostgreSQL): each
/// run of letters or digits is a word, all of which must match; a word matches as a prefix
/// (`"lapt"*`, `'lapt':*`), and a word in Chinese, Japanese or Korean anywhere inside a longer
/// run (see `SearchText`). Quoting makes every word a plain term, so no input can use FTS5 or
/// `tsquery` syntax (`OR`, `NEAR`, column filters, `&`, `<->`) or break the query.
enum SearchQuery {
    /// The most words a query may use; later ones are ignored.
    static let maximumTerms = 16

    /// The words of `query`, lower-cased, at most `maximumTerms`: its runs of letters or digits.
    static func words(of query: String) -> [String] {
        Array(SearchText.words(of: query).prefix(maximumTerms))
    }

    /// The FTS5 expression requiring every one of `words`, or nil when there are none (it then
    /// matches nothing).
    static func expression(for words: [String]) -> String? {
        words.isEmpty ? nil : words.map(SearchText.queryTerm(for:)).joined(separator: " ")
    }

    /// The FTS5 expression for `query`, or nil when it has no letters or digits.
    static func expression(for query: String) -> String? {
        expression(for: words(of: query))
    }

    /// The `tsquery` requiring every one of `words` (each in the title when `titleOnly`), the
    /// PostgreSQL counterpart of `expression(for:)`; nil when there are none.
    static func tsQuery(for words: [String], titleOnly: Bool = false) -> String? {
        words.isEmpty ? nil : words.map { "(" + SearchText.tsQueryTerm(for: $0, titleOnly: titleOnly) + ")" }.joined(separator: " & ")
    }
}
