/// Turns a shopper's `query` into an FTS5 expression: each run of letters or digits becomes a
/// quoted prefix term (`"lapt"*`), all of which must match. Quoting makes every word a plain
/// term, so no input can use FTS5 syntax (`OR`, `NEAR`, column filters) or break the query.
enum SearchQuery {
    /// The most words a query may use; later ones are ignored.
    static let maximumTerms = 16

    /// The FTS5 expression for `query`, or nil when it has no letters or digits (it then
    /// matches nothing).
    static func expression(for query: String) -> String? {
        var terms: [String] = []
        var current = ""
        for character in query.lowercased() {
            if character.isLetter || character.isNumber {
                current.append(character)
            } else if !current.isEmpty {
                terms.append(current)
                current = ""
            }
        }
        if !current.isEmpty { terms.append(current) }
        guard !terms.isEmpty else { return nil }
        return terms.prefix(maximumTerms).map { "\"\($0)\"*" }.joined(separator: " ")
    }
}
