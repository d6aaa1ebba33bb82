/// How text is cut into the words the search index holds, where FTS5's `unicode61` tokenizer
/// alone falls short: it takes a whole run of Chinese, Japanese or Korean characters as one
/// token, so `湯呑み` inside `伝統的な湯呑みセット` could never be found.
///
/// Every such run is indexed as its overlapping pairs of characters (bigrams), followed by its
/// last character alone: `湯呑み` becomes `湯呑 呑み み`. So every character of a run starts one
/// token, and
/// - a query of two or more characters of a run is the phrase of its bigrams (`湯呑み` is
///   `"湯呑 呑み"`, adjacent and in order), found anywhere inside a longer run;
/// - a query of one character is a prefix term (`"呑"*`), found wherever the character is,
///   also at the end of a run (through the lone last character).
///
/// Other text is left to `unicode61` as before. Text and queries go through the same cut, so
/// the index stays consistent with the queries; a change to it needs a migration that rebuilds
/// the index (see `CatalogSchema`).
///
/// On PostgreSQL the same cut serves a `tsvector` (`tokenForm(of:)`, `tsQueryTerm(for:titleOnly:)`):
/// there the text is cut into words here too, since PostgreSQL's parser would keep
/// `noise-cancelling` or `15.6` whole where `unicode61` makes two tokens of each.
enum SearchText {
    /// One part of a query word: a term matched as a prefix, or a phrase of exact terms
    /// (a CJK run's bigrams, adjacent and in order).
    enum QueryPart: Equatable {
        /// Any token that starts with this text.
        case prefix(String)
        /// These tokens at consecutive positions.
        case phrase([String])
    }

    /// The words of `text`, lower-cased: its runs of letters or digits (what `unicode61`
    /// takes as tokens), in order.
    static func words(of text: String) -> [String] {
        var words: [String] = []
        var current = ""
        for character in text.lowercased() {
            if character.isLetter || character.isNumber {
                current.append(character)
            } else if !current.isEmpty {
                words.append(current)
                current = ""
            }
        }
        if !current.isEmpty { words.append(current) }
        return words
    }

    /// `text` as it is written into PostgreSQL's search index: its words (`words(of:)`)
    /// separated by spaces, each CJK run cut as `indexForm(of:)` cuts it. PostgreSQL's parser
    /// then finds exactly these tokens, whatever it would have made of the punctuation.
    static func tokenForm(of text: String) -> String {
        indexForm(of: words(of: text).joined(separator: " "))
    }

    /// `text` as it is written into the search index: each CJK run replaced by its bigrams and
    /// its last character, separated by spaces; everything else unchanged.
    static func indexForm(of text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        forEachSegment(of: text) { segment, isCJK in
            if isCJK, let last = segment.last {
                result += " " + (bigrams(of: segment) + [String(last)]).joined(separator: " ") + " "
            } else {
                result += String(segment)
            }
        }
        return result
    }

    /// The FTS5 term for one query word (letters and digits only, so nothing in it is FTS5
    /// syntax): each CJK run as the phrase of its bigrams (or, of one character, as a prefix),
    /// each other part as a prefix; several parts are all required.
    static func queryTerm(for word: String) -> String {
        queryParts(for: word).map { part in
            switch part {
            case .prefix(let text): "\"\(text)\"*"
            case .phrase(let terms): "\"\(terms.joined(separator: " "))\""
            }
        }.joined(separator: " ")
    }

    /// The `tsquery` (`to_tsquery`'s input) for one query word, with the same parts as
    /// `queryTerm(for:)`: a prefix is `'lapt':*`, a phrase `('湯呑' <-> '呑み')`, all parts
    /// required (`&`). `titleOnly` restricts every term to the title's weight, `A`. Each term
    /// is quoted, so no input can use `tsquery` syntax.
    static func tsQueryTerm(for word: String, titleOnly: Bool) -> String {
        let weight = titleOnly ? "A" : ""
        return queryParts(for: word).map { part in
            switch part {
            case .prefix(let text): "\(tsQueryQuoted(text)):*\(weight)"
            case .phrase(let terms):
                "(" + terms.map { tsQueryQuoted($0) + (titleOnly ? ":A" : "") }.joined(separator: " <-> ") + ")"
            }
        }.joined(separator: " & ")
    }

    /// The parts of one query word: each CJK run of two or more characters as the phrase of
    /// its bigrams, each other run (a single CJK character included) as a prefix.
    static func queryParts(for word: String) -> [QueryPart] {
        var parts: [QueryPart] = []
        forEachSegment(of: word) { segment, isCJK in
            parts.append(isCJK && segment.count > 1 ? .phrase(bigrams(of: segment)) : .prefix(String(segment)))
        }
        return parts
    }

    /// `text` as a quoted `tsquery` operand (a quote or backslash in it escaped).
    private static func tsQueryQuoted(_ text: String) -> String {
        "'" + text.replacing("\\", with: "\\\\").replacing("'", with: "''") + "'"
    }

    /// Whether `word` holds a CJK character (such words are matched as they are, never corrected).
    static func containsCJK(_ word: String) -> Bool {
        word.contains(where: isCJK)
    }

    /// Calls `body` with each maximal run of `text` that is all CJK characters or all others,
    /// in order.
    private static func forEachSegment(of text: String, _ body: (ArraySlice<Character>, Bool) -> Void) {
        let characters = Array(text)
        var start = 0
        while start < characters.count {
            let cjk = isCJK(characters[start])
            var end = start + 1
            while end < characters.count, isCJK(characters[end]) == cjk { end += 1 }
            body(characters[start..<end], cjk)
            start = end
        }
    }

    /// The overlapping pairs of a run of two or more characters.
    private static func bigrams(of run: ArraySlice<Character>) -> [String] {
        zip(run, run.dropFirst()).map { String($0) + String($1) }
    }

    /// Whether `character` belongs to a script written without spaces between words, which
    /// `unicode61` would glue into one token: Han ideographs (and the iteration marks 々〆〇),
    /// Hiragana, Katakana (with the prolonged sound mark and half-width forms) and Hangul.
    static func isCJK(_ character: Character) -> Bool {
        guard let scalar = character.unicodeScalars.first else { return false }
        if scalar.properties.isIdeographic { return true }
        switch scalar.value {
        case 0x3005...0x3007,  // 々 〆 〇
            0x3040...0x309F,  // Hiragana
            0x30A0...0x30FF,  // Katakana, ー
            0x31F0...0x31FF,  // Katakana phonetic extensions
            0xFF66...0xFF9F,  // half-width Katakana
            0x1100...0x11FF, 0x3130...0x318F, 0xAC00...0xD7AF:  // Hangul jamo and syllables
            return true
        default:
            return false
        }
    }
}
