internal import Foundation
import RPC
package import JSON

/// One difference between what a contract expects and what was sent or answered: where, what
/// the contract asked for, and what was there.
package struct Mismatch: Sendable, Hashable, CustomStringConvertible {
    /// Where: a JSON path into the message (`$.product.price`), or a metadata name, or `status`.
    package var path: String
    /// What the contract asked for, e.g. `an object like {"amount":1999,"currency":"USD"} (by type)`.
    package var expected: String
    /// What was there, e.g. `"19.99"`, or `nothing (the field is missing)`.
    package var actual: String

    /// Creates a mismatch.
    package init(path: String, expected: String, actual: String) {
        self.path = path
        self.expected = expected
        self.actual = actual
    }

    /// One line: `$.product.price: expected …, actual …`.
    package var description: String { "\(path): expected \(expected), actual \(actual)" }
}

/// The readable forms of JSON values in diffs and reports.
package enum JSONText {
    /// Compact JSON with sorted keys, cut to `limit` characters.
    package static func compact(_ value: JSONValue, limit: Int = 120) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let text = (try? encoder.encode(value)).flatMap { String(data: $0, encoding: .utf8) } ?? "\(value)"
        return text.count > limit ? String(text.prefix(limit)) + "…" : text
    }

    /// The JSON type's name with an article: `a string`, `an object`…
    package static func typeName(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// A value with its type, for the `actual` side: `a string "19.99"`.
    package static func described(_ value: JSONValue) -> String {
        value == .null ? "null" : "\(typeName(value)) \(compact(value))"
    }
}
