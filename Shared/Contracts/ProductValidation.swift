import Foundation
import RPC
public import JSON

/// The rules a product written by an admin must meet (`UpsertProduct`, `ImportProducts`),
/// in one place so that catalog-svc, which enforces them, and `shopctl admin products import
/// --dry-run`, which checks a file against them before anything is sent, cannot drift apart.
///
/// Every rule is checked, not only the first that fails, so a person fixes a product in one go.
public enum ProductValidation {
    /// The largest product id: 2^53 - 1, exact as a JSON number in every client (JavaScript's
    /// largest safe integer), and far enough below `Int.max` that the next id always fits.
    public static let maximumID = 9_007_199_254_740_991
    /// The most units of a product the catalog keeps: far above any shop's stock, and far
    /// enough below `Int.max` that no reservation or release can overflow.
    public static let maximumStock = 1_000_000_000
    /// The most characters of a title.
    public static let maximumTitleLength = 200
    /// The most characters of a description.
    public static let maximumDescriptionLength = 5000
    /// The most characters of a category.
    public static let maximumCategoryLength = 100
    /// The most bytes of an image URL.
    public static let maximumImageURLLength = 2048

    /// One broken rule: the field it is about, as a path for `fieldViolations` details, what the
    /// rule says in the style of a field violation, and a sentence in the user's words.
    public struct Problem: Sendable, Hashable {
        /// The field path, e.g. `product.price.amount`.
        public var field: String
        /// What the field must be, e.g. "must be 1 to 200 characters".
        public var description: String
        /// The problem for people, naming the field as they know it: "the title is empty".
        public var message: String

        /// Creates a problem.
        public init(field: String, description: String, message: String) {
            self.field = field
            self.description = description
            self.message = message
        }
    }

    /// Every rule `product` breaks, in field order; empty when it is valid.
    public static func problems(with product: Product) -> [Problem] {
        var problems: [Problem] = []
        if !(0...maximumID).contains(product.id) {
            problems.append(
                Problem(
                    field: "product.id", description: "must be 0 to \(maximumID)",
                    message: "the id \(product.id) is not 0 to \(maximumID) (0 or none creates a product)"))
        }
        problems += text(product.title, named: "title", field: "product.title", maximum: maximumTitleLength)
        if product.description.count > maximumDescriptionLength {
            problems.append(
                Problem(
                    field: "product.description", description: "must be at most \(maximumDescriptionLength) characters",
                    message: "the description is longer than \(maximumDescriptionLength) characters"))
        }
        problems += text(product.category, named: "category", field: "product.category", maximum: maximumCategoryLength)
        problems += priceProblems(product.price)
        if !product.image.isEmpty && !isWebURL(product.image) {
            problems.append(
                Problem(
                    field: "product.image",
                    description: "must be empty or an http(s) URL of at most \(maximumImageURLLength) characters",
                    message: "the image is not an http(s) URL of at most \(maximumImageURLLength) characters"))
        }
        if !product.rating.rate.isFinite || !(0...5).contains(product.rating.rate) {
            problems.append(
                Problem(
                    field: "product.rating.rate", description: "must be between 0 and 5",
                    message: "the rating \(product.rating.rate) is not between 0 and 5"))
        }
        if product.rating.count < 0 {
            problems.append(
                Problem(
                    field: "product.rating.count", description: "must not be negative",
                    message: "the number of ratings is negative"))
        }
        if !(0...maximumStock).contains(product.stock) {
            problems.append(
                Problem(
                    field: "product.stock", description: "must be 0 to \(maximumStock)",
                    message: "the stock \(product.stock) is not 0 to \(maximumStock)"))
        }
        return problems
    }

    /// `product` as the catalog stores it: title and category without surrounding whitespace.
    public static func normalized(_ product: Product) -> Product {
        var clean = product
        clean.title = product.title.trimmingCharacters(in: .whitespacesAndNewlines)
        clean.category = product.category.trimmingCharacters(in: .whitespacesAndNewlines)
        return clean
    }

    /// The problems as one sentence for people: "The title is empty; the stock -1 is not 0 to …."
    public static func sentence(_ problems: [Problem]) -> String {
        sentence(messages: problems.map(\.message))
    }

    /// `messages` joined into one sentence, its first letter upper-cased and a full stop at the end.
    public static func sentence(messages: [String]) -> String {
        let joined = messages.joined(separator: "; ")
        guard let first = joined.first else { return "" }
        return first.uppercased() + joined.dropFirst() + (joined.hasSuffix(".") ? "" : ".")
    }

    /// The problems as a `fieldViolations` detail, one entry per problem.
    public static func details(_ problems: [Problem]) -> JSONValue {
        .object([
            "fieldViolations": .array(
                problems.map { .object(["field": .string($0.field), "description": .string($0.description)]) })
        ])
    }

    /// The problems of a required text field, surrounding whitespace aside: empty, too long,
    /// control characters.
    private static func text(_ value: String, named name: String, field: String, maximum: Int) -> [Problem] {
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        var problems: [Problem] = []
        if trimmed.isEmpty {
            problems.append(
                Problem(field: field, description: "must be 1 to \(maximum) characters", message: "the \(name) is empty"))
        } else if trimmed.count > maximum {
            problems.append(
                Problem(
                    field: field, description: "must be 1 to \(maximum) characters",
                    message: "the \(name) is longer than \(maximum) characters"))
        }
        if trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            problems.append(
                Problem(
                    field: field, description: "must not contain control characters",
                    message: "the \(name) contains control characters"))
        }
        return problems
    }

    /// The problems of a unit price: its amount and its currency.
    private static func priceProblems(_ price: Money) -> [Problem] {
        var problems: [Problem] = []
        if !price.isUnitPrice {
            let message =
                price.amount < 0
                ? "the price is negative" : "the price is more than \(Money.maximumUnitAmount) minor units"
            problems.append(
                Problem(field: "product.price.amount", description: "must be 0 to \(Money.maximumUnitAmount)", message: message))
        }
        if !Money.isCurrencyCode(price.currency) {
            problems.append(
                Problem(
                    field: "product.price.currency", description: "must be an ISO 4217 code of three upper-case letters",
                    message: "the currency '\(ClientInput.quoted(price.currency))' is not an ISO 4217 code of three upper-case letters"))
        }
        return problems
    }

    /// Whether `text` is an absolute http(s) URL with a host, of at most ``maximumImageURLLength`` bytes.
    private static func isWebURL(_ text: String) -> Bool {
        guard text.utf8.count <= maximumImageURLLength, let url = URL(string: text), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", url.host != nil
        else { return false }
        return true
    }
}
