import Contracts
import Foundation

/// "Did you mean …?" for a search word that matches nothing: the word of the catalog's own
/// vocabulary closest to it by edit distance (insertions, deletions, substitutions and swaps of
/// neighbours, one each — the typos people make: "headphnes", "jakcet"), the most common one
/// among equally close words.
///
/// The measure and its threshold are ``EditDistance`` (Contracts), which shopctl's suggestions
/// of categories and commands use too.
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
    /// is within `EditDistance.allowedEdits(between:and:)`.
    static func correction(for word: String, among vocabulary: [Term]) -> String? {
        let typed = Array(word.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil))
        guard typed.count >= minimumLength else { return nil }
        var best: (term: Term, distance: Int)?
        for term in vocabulary {
            let candidate = Array(term.word)
            let limit = min(EditDistance.allowedEdits(between: typed.count, and: candidate.count), best?.distance ?? .max)
            guard let distance = EditDistance.distance(typed, candidate, limit: limit) else { continue }
            if let best, (best.distance, -best.term.products, best.term.word) <= (distance, -term.products, term.word) {
                continue
            }
            best = (term, distance)
        }
        return best.map { $0.distance > 0 ? $0.term.word : nil } ?? nil
    }
}
