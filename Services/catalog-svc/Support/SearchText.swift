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
enum SearchText {
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
        var parts: [String] = []
        forEachSegment(of: word) { segment, isCJK in
            parts.append(isCJK && segment.count > 1 ? "\"\(bigrams(of: segment).joined(separator: " "))\"" : "\"\(String(segment))\"*")
        }
        return parts.joined(separator: " ")
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
