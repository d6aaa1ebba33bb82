/// How an actual value is compared with the contract's example at a JSON path.
///
/// A matcher applies to its path and everything beneath it, until a deeper path has a
/// matcher of its own (Pact's cascading rules). Where no matcher applies, values must equal
/// the example and objects may not carry fields the example lacks.
package struct Matcher: Codable, Sendable, Hashable, CustomStringConvertible {
    /// The comparisons.
    package enum Kind: String, Codable, Sendable, Hashable {
        /// The same value as the example (objects and arrays member by member).
        case equality
        /// The same JSON type as the example: any string for a string, any number for a number;
        /// every element of an array like the example's first.
        case type
        /// A number without a fraction.
        case integer
        /// A string matching ``Matcher/regex`` in full.
        case regex
    }

    /// The comparison.
    package var match: Kind
    /// The pattern of a `regex` matcher (NSRegularExpression syntax, matched against the whole string).
    package var regex: String?
    /// Whether objects at and beneath this path may carry fields the example lacks; nil keeps
    /// what applies above.
    package var extraFieldsAllowed: Bool?
    /// The fewest elements an array matched by type must have.
    package var minItems: Int?

    /// Creates a matcher.
    package init(match: Kind, regex: String? = nil, extraFieldsAllowed: Bool? = nil, minItems: Int? = nil) {
        self.match = match
        self.regex = regex
        self.extraFieldsAllowed = extraFieldsAllowed
        self.minItems = minItems
    }

    /// Equal to the example.
    package static let equality = Matcher(match: .equality)
    /// Of the example's JSON type.
    package static let type = Matcher(match: .type)
    /// A whole number.
    package static let integer = Matcher(match: .integer)

    /// A string matching `pattern` in full.
    package static func regex(_ pattern: String) -> Matcher { Matcher(match: .regex, regex: pattern) }

    /// Of the example's type, with at least `minimum` elements where it is an array.
    package static func type(minItems minimum: Int) -> Matcher { Matcher(match: .type, minItems: minimum) }

    /// This matcher, letting objects at and beneath its path carry fields the example lacks.
    package var allowingExtraFields: Matcher {
        var copy = self
        copy.extraFieldsAllowed = true
        return copy
    }

/// The matcher in words, for reports: `by type, extra fields allowed`.
    package var description: String {
        var text: String
        switch match {
        case .equality: text = "by equality"
        case .type: text = "by type"
        case .integer: text = "as an integer"
        case .regex: text = "by regex /\(regex ?? "")/"
        }
        if let minItems { text += ", at least \(minItems) items" }
        if extraFieldsAllowed == true { text += ", extra fields allowed" }
        return text
    }

    /// Common patterns.
    package enum Pattern {
        /// A lower-case or upper-case UUID.
        package static let uuid = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
        /// An RFC 3339 UTC timestamp, with or without fractional seconds.
        package static let timestamp = "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?Z"
        /// A compact JWS (a JWT).
        package static let jws = "[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+"
        /// `Bearer` and a compact JWS.
        package static let bearerToken = "Bearer [A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+"
        /// Unpadded base64url.
        package static let base64URL = "[A-Za-z0-9_-]+"
        /// Any non-empty value.
        package static let nonEmpty = ".+"
    }
}
