import Contracts

/// "Did you mean …?": the known word closest to one a person typed — a category, a command —
/// by edit distance, or nothing when none is close enough to be worth suggesting.
///
/// Words are compared case-insensitively by ``EditDistance`` (Contracts), the measure
/// catalog-svc's search suggestions use too.
enum ClosestMatch {
    /// The candidate of `candidates` closest to `typed`, in the candidate's own spelling, or nil
    /// when none is within `EditDistance.allowedEdits(between:and:)`. An exact case-insensitive match always
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
            let limit = min(EditDistance.allowedEdits(between: word.count, and: other.count), (best?.distance ?? .max) - 1)
            guard limit >= 0, let distance = EditDistance.distance(word, other, limit: limit) else { continue }
            best = (candidate, distance)
            if distance == 0 { break }
        }
        return best?.candidate
    }
}
