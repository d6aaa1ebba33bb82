import Contracts
import Foundation
import RPC

/// The validation of products written by admins (README "Choices"): each rule names the field
/// it is about, so a refusal is `INVALID_ARGUMENT` with a field violation.
enum ProductRules {
    /// The most units of a product the catalog keeps: far above any shop's stock, and far
    /// enough below `Int.max` that no reservation or release can overflow.
    static let maximumStock = 1_000_000_000
    /// The most units one reservation line may take.
    static let maximumReservationCount = 1_000_000
    /// The largest product id: 2^53 - 1, exact as a JSON number in every client (JavaScript's
    /// largest safe integer), and far enough below `Int.max` that the next id always fits.
    static let maximumID = 9_007_199_254_740_991

    /// The first problem with `product`, as (field path, description), or nil when it is valid.
    static func problem(with product: Product) -> (field: String, description: String)? {
        func length(_ text: String, _ range: ClosedRange<Int>) -> Bool { range.contains(text.count) }
        if !(0...maximumID).contains(product.id) { return ("product.id", "must be 0 to \(maximumID)") }
        let title = product.title.trimmingCharacters(in: .whitespacesAndNewlines)
        if !length(title, 1...200) { return ("product.title", "must be 1 to 200 characters") }
        if product.description.count > 5000 { return ("product.description", "must be at most 5000 characters") }
        let category = product.category.trimmingCharacters(in: .whitespacesAndNewlines)
        if !length(category, 1...100) { return ("product.category", "must be 1 to 100 characters") }
        if hasControlCharacters(title) || hasControlCharacters(category) {
            return (hasControlCharacters(title) ? "product.title" : "product.category", "must not contain control characters")
        }
        if !product.price.isUnitPrice {
            return ("product.price.amount", "must be 0 to \(Money.maximumUnitAmount)")
        }
        if !Money.isCurrencyCode(product.price.currency) {
            return ("product.price.currency", "must be an ISO 4217 code of three upper-case letters")
        }
        if !product.image.isEmpty && !isWebURL(product.image) {
            return ("product.image", "must be empty or an http(s) URL of at most 2048 characters")
        }
        if !product.rating.rate.isFinite || !(0...5).contains(product.rating.rate) {
            return ("product.rating.rate", "must be between 0 and 5")
        }
        if product.rating.count < 0 { return ("product.rating.count", "must not be negative") }
        if !(0...maximumStock).contains(product.stock) {
            return ("product.stock", "must be 0 to \(maximumStock)")
        }
        return nil
    }

    /// `product` with surrounding whitespace trimmed from its title and category, or
    /// INVALID_ARGUMENT naming the first bad field.
    static func validated(_ product: Product) throws(RPCError) -> Product {
        if let (field, description) = problem(with: product) { throw CatalogReason.invalidProduct.invalidField(field, description) }
        var clean = product
        clean.title = product.title.trimmingCharacters(in: .whitespacesAndNewlines)
        clean.category = product.category.trimmingCharacters(in: .whitespacesAndNewlines)
        return clean
    }

    private static func hasControlCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    private static func isWebURL(_ text: String) -> Bool {
        guard text.utf8.count <= 2048, let url = URL(string: text), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", url.host != nil
        else { return false }
        return true
    }
}
