/// "Did you mean …?": the known word closest to one a person typed — a category, a command —
/// by edit distance, or nothing when none is close enough to be worth suggesting.
///
/// Words are compared case-insensitively by characters (grapheme clusters), so a CJK or accented
/// word counts each character it shows as one edit. The distance is the optimal string alignment
/// distance: insertions, deletions, substitutions and swaps of two neighbouring characters each
/// cost one, as the typos people make do ("prodcts", "jewelry", "hedaphones").
enum ClosestMatch {
    /// The candidate of `candidates` closest to `typed`, in the candidate's own spelling, or nil
    /// when none is within ``allowedEdits(between:and:)``. An exact case-insensitive match always
    /// wins; among equally close candidates the earliest in `candidates` is chosen, so the answer
    /// does not depend on anything but the inputs.
    static func best(for typed: String, among candidates: [String]) -> String? {
        let word = Array(typed.lowercased())
        guard !word.isEmpty else { return nil }
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let other = Array(candidate.lowercased())
            // Only a candidate closer than the best so far can win: the bound lets `distance`
            // stop early, so a long list of far-off words costs little.
            let limit = min(allowedEdits(between: word.count, and: other.count), (best?.distance ?? .max) - 1)
            guard limit >= 0, let distance = distance(word, other, limit: limit) else { continue }
            best = (candidate, distance)
            if distance == 0 { break }
        }
        return best?.candidate
    }

    /// How many edits still leave two words of these lengths "close": one per three characters
    /// of the shorter word, at least one — but never as many as the shorter word has, since a
    /// word entirely replaced is a different word, not a typo of it.
    static func allowedEdits(between length: Int, and otherLength: Int) -> Int {
        let shorter = min(length, otherLength)
        return min(max(1, shorter / 3), shorter - 1)
    }

    /// The optimal string alignment distance between `word` and `other` if it is at most `limit`,
    /// else nil. Stops as soon as every alignment costs more than `limit`; takes time proportional
    /// to the product of the lengths at most.
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
            // Costs never fall from one row to the next along any alignment.
            if rowMinimum > limit { return nil }
            (beforePrevious, previous, current) = (previous, current, beforePrevious)
        }
        let result = previous[other.count]
        return result <= limit ? result : nil
    }
}
