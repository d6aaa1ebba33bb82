import Contracts

/// The catalog's own rules beyond the product rules it shares with shopctl
/// (``ProductValidation`` in Contracts: a product's fields, its id and stock bounds).
enum ProductRules {
    /// The most units one reservation line may take.
    static let maximumReservationCount = 1_000_000
}
