/// The series names a PromQL expression selects, found without a full parser: the
/// expressions of a dashboard are queries of the usual shape (aggregations, functions, label
/// matchers, ranges, arithmetic), and what such a query names is every identifier outside
/// strings, label matchers, ranges and grouping clauses that is neither a function nor a
/// keyword.
enum PromQLNames {
    /// Words of the language that are no series.
    static let keywords: Set<String> = [
        "and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left", "group_right", "inf", "nan",
    ]

    /// The series names `expression` selects, in order of appearance, each once.
    static func series(in expression: String) -> [String] {
        var text = expression
        // Innermost first: a string may hold braces, a matcher may hold strings.
        let erased: [Regex<Substring>] = [
            #/"(?:[^"\\]|\\.)*"/#, #/'(?:[^'\\]|\\.)*'/#, #/\{[^}]*\}/#, #/\[[^\]]*\]/#,
            #/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/#,
        ]
        for pattern in erased { text.replace(pattern, with: " ") }
        var names: [String] = []
        for match in text.matches(of: #/([A-Za-z_:][A-Za-z0-9_:]*)(\s*\()?/#) {
            let name = String(match.output.1)
            // Followed by "(": a function or an aggregation; after a digit: part of a number.
            guard match.output.2 == nil, !keywords.contains(name), !Self.isInsideNumber(match.range.lowerBound, of: text)
            else { continue }
            if !names.contains(name) { names.append(name) }
        }
        return names
    }

    /// Whether the identifier starting at `index` continues a number (`1e3`, `0x1f`).
    private static func isInsideNumber(_ index: String.Index, of text: String) -> Bool {
        guard index > text.startIndex else { return false }
        let previous = text[text.index(before: index)]
        return previous.isNumber || previous == "."
    }
}
