/// Turns a shopper's `query` into an FTS5 expression: each run of letters or digits is a word,
/// all of which must match; a word matches as a prefix (`"lapt"*`), and a word in Chinese,
/// Japanese or Korean anywhere inside a longer run (see `SearchText`). Quoting makes every word
/// a plain term, so no input can use FTS5 syntax (`OR`, `NEAR`, column filters) or break the
/// query.
enum SearchQuery {
    /// The most words a query may use; later ones are ignored.
    static let maximumTerms = 16

    /// The words of `query`, lower-cased, at most `maximumTerms`: its runs of letters or digits.
    static func words(of query: String) -> [String] {
        var words: [String] = []
        var current = ""
        for character in query.lowercased() {
            if character.isLetter || character.isNumber {
                current.append(character)
            } else if !current.isEmpty {
                words.append(current)
                current = ""
            }
        }
        if !current.isEmpty { words.append(current) }
        return Array(words.prefix(maximumTerms))
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
}
