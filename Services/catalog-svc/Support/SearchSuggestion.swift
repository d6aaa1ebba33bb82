import Foundation

/// "Did you mean …?" for a search word that matches nothing: the word of the catalog's own
/// vocabulary closest to it by edit distance (insertions, deletions, substitutions and swaps of
/// neighbours, one each — the typos people make: "headphnes", "jakcet"), the most common one
/// among equally close words.
///
/// The measure and its threshold are shopctl's `ClosestMatch` (Services/shopctl/Support), which
/// suggests categories and commands; the two targets share no library to hold one copy.
enum SearchSuggestion {
    /// One word of the search index's vocabulary.
    struct Term: Sendable, Hashable {
        /// The word, as the index holds it: lower-case, without diacritics.
        var word: String
        /// How many products hold it.
        var products: Int
    }

    /// The words shorter than this are never corrected: too many words are one edit from them.
    static let minimumLength = 3

    /// The term of `vocabulary` closest to `word` — fewest edits, then held by most products,
    /// then first alphabetically, so the answer depends on the catalog alone — or nil when none
    /// is within ``allowedEdits(shorterLength:)``.
    static func correction(for word: String, among vocabulary: [Term]) -> String? {
        let typed = Array(word.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil))
        guard typed.count >= minimumLength else { return nil }
        var best: (term: Term, distance: Int)?
        for term in vocabulary {
            let candidate = Array(term.word)
            let limit = min(allowedEdits(shorterLength: min(typed.count, candidate.count)), best?.distance ?? .max)
            guard let distance = distance(typed, candidate, limit: limit) else { continue }
            if let best, (best.distance, -best.term.products, best.term.word) <= (distance, -term.products, term.word) {
                continue
            }
            best = (term, distance)
        }
        return best.map { $0.distance > 0 ? $0.term.word : nil } ?? nil
    }

    /// How many edits still leave two words "close", the shorter of them `shorterLength`
    /// characters long: one per three characters, at least one, never the whole word.
    static func allowedEdits(shorterLength: Int) -> Int {
        max(0, min(max(1, shorterLength / 3), shorterLength - 1))
    }

    /// The optimal string alignment distance between `word` and `other` if it is at most
    /// `limit`, else nil; stops as soon as every alignment costs more than `limit`.
    static func distance(_ word: [Character], _ other: [Character], limit: Int) -> Int? {
        guard limit >= 0, abs(word.count - other.count) <= limit else { return nil }
        if word.isEmpty || other.isEmpty { return max(word.count, other.count) }
        // Three rows of the dynamic-programming table: two rows back is needed for swaps.
        var beforePrevious = [Int](repeating: 0, count: other.count + 1)
        var previous = Array(0...other.count)
        var current = [Int](repeating: 0, count: other.count + 1)
        for i in 1...word.count {
            current[0] = i
            var rowMinimum = i
            for j in 1...other.count {
                let substitution = previous[j - 1] + (word[i - 1] == other[j - 1] ? 0 : 1)
                var cost = min(previous[j] + 1, current[j - 1] + 1, substitution)
                if i > 1, j > 1, word[i - 1] == other[j - 2], word[i - 2] == other[j - 1] {
                    cost = min(cost, beforePrevious[j - 2] + 1)
                }
                current[j] = cost
                rowMinimum = min(rowMinimum, cost)
            }
            // No alignment gets cheaper in a later row, swaps included (a swap costs one more
            // than a cell two rows back, which bounds the row between from below).
            if rowMinimum > limit { return nil }
            (beforePrevious, previous, current) = (previous, current, beforePrevious)
        }
        let result = previous[other.count]
        return result <= limit ? result : nil
    }
}
