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
        all(for: typed, among: candidates).first
    }

    /// Every candidate of `candidates` within `EditDistance.allowedEdits(between:and:)` of
    /// `typed`, in its own spelling, closest first (an exact case-insensitive match first of
    /// all); equally close candidates keep their order in `candidates`. Empty for an empty `typed`.
    static func all(for typed: String, among candidates: [String]) -> [String] {
        let word = Array(typed.lowercased())
        guard !word.isEmpty else { return [] }
        let close = candidates.enumerated().compactMap { index, candidate -> (index: Int, distance: Int, candidate: String)? in
            let other = Array(candidate.lowercased())
            let limit = EditDistance.allowedEdits(between: word.count, and: other.count)
            return EditDistance.distance(word, other, limit: limit).map { (index, $0, candidate) }
        }
        return close.sorted { ($0.distance, $0.index) < ($1.distance, $1.index) }.map(\.candidate)
    }
}
