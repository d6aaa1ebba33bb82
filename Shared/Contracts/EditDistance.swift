/// How far apart two words are, for "did you mean …?": catalog-svc's search suggestions and
/// shopctl's suggestions of commands and categories measure with this one function and
/// threshold, so what the service and the command line call "close" is the same.
///
/// The distance is the optimal string alignment distance over characters (grapheme clusters):
/// insertions, deletions, substitutions and swaps of two neighbouring characters each cost one,
/// as the typos people make do ("prodcts", "jewelry", "headphnes").
public enum EditDistance {
    /// How many edits still leave two words of these lengths "close": one per three characters
    /// of the shorter word, at least one — but never as many as the shorter word has, since a
    /// word entirely replaced is a different word, not a typo of it.
    public static func allowedEdits(between length: Int, and otherLength: Int) -> Int {
        let shorter = min(length, otherLength)
        return max(0, min(max(1, shorter / 3), shorter - 1))
    }

    /// The optimal string alignment distance between `word` and `other` if it is at most `limit`,
    /// else nil. Stops as soon as every alignment costs more than `limit`; takes time proportional
    /// to the product of the lengths at most.
    public static func distance(_ word: [Character], _ other: [Character], limit: Int) -> Int? {
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
