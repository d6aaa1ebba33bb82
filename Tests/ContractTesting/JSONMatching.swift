internal import Foundation
import RPC
package import JSON

/// Compares an actual JSON value with a contract's example under its matching rules, and
/// lists every difference (not just the first), each with its path.
package enum JSONMatching {
    /// What applies at a node: the nearest matcher at or above it.
    private struct Applied {
        var kind: Matcher.Kind
        var regex: String?
        var minItems: Int?
        var extraFieldsAllowed: Bool

        mutating func apply(_ matcher: Matcher) {
            kind = matcher.match
            regex = matcher.regex
            minItems = matcher.minItems
            if let allowed = matcher.extraFieldsAllowed { extraFieldsAllowed = allowed }
        }
    }

    /// Every way `actual` differs from `expected` under `rules`, in path order; empty when it matches.
    package static func mismatches(expected: JSONValue, actual: JSONValue, rules: MatchingRuleSet) -> [Mismatch] {
        var found: [Mismatch] = []
        compare(
            expected, actual, at: .root, rules: rules,
            applied: Applied(kind: .equality, regex: nil, minItems: nil, extraFieldsAllowed: false), into: &found)
        return found
    }

    /// ``mismatches(expected:actual:rules:)`` with rules as a contract writes them.
    package static func mismatches(
        expected: JSONValue, actual: JSONValue, rules: [String: Matcher]
    ) throws(ContractError) -> [Mismatch] {
        mismatches(expected: expected, actual: actual, rules: try MatchingRuleSet(rules))
    }

    private static func compare(
        _ expected: JSONValue, _ actual: JSONValue?, at path: JSONPath, rules: MatchingRuleSet, applied inherited: Applied,
        into found: inout [Mismatch]
    ) {
        var applied = inherited
        if let matcher = rules.matcher(at: path) { applied.apply(matcher) }
        guard let actual else {
            found.append(
                Mismatch(
                    path: path.description, expected: expectation(expected, applied),
                    actual: "nothing (the field is missing)"))
            return
        }
        switch applied.kind {
        case .regex:
            let pattern = applied.regex ?? ""
            guard case .string(let text) = actual, fullyMatches(text, pattern) else {
                found.append(
                    Mismatch(path: path.description, expected: expectation(expected, applied), actual: JSONText.described(actual)))
                return
            }
        case .integer:
            guard case .number(let number) = actual, number.rounded() == number else {
                found.append(Mismatch(path: path.description, expected: "an integer", actual: JSONText.described(actual)))
                return
            }
        case .equality, .type:
            compareStructure(expected, actual, at: path, rules: rules, applied: applied, into: &found)
        }
    }

    private static func compareStructure(
        _ expected: JSONValue, _ actual: JSONValue, at path: JSONPath, rules: MatchingRuleSet, applied: Applied,
        into found: inout [Mismatch]
    ) {
        switch (expected, actual) {
        case (.object(let expectedMembers), .object(let actualMembers)):
            for key in expectedMembers.keys.sorted() {
                compare(
                    expectedMembers[key] ?? .null, actualMembers[key], at: path.appending(key: key), rules: rules,
                    applied: applied, into: &found)
            }
            guard !applied.extraFieldsAllowed else { return }
            for key in actualMembers.keys.sorted() where expectedMembers[key] == nil {
                found.append(
                    Mismatch(
                        path: path.appending(key: key).description,
                        expected: "no such field (the contract allows no extra fields here)",
                        actual: JSONText.described(actualMembers[key] ?? .null)))
            }
        case (.array(let expectedElements), .array(let actualElements)):
            if applied.kind == .equality {
                if expectedElements.count != actualElements.count {
                    found.append(
                        Mismatch(
                            path: path.description, expected: "\(expectedElements.count) elements \(JSONText.compact(expected))",
                            actual: "\(actualElements.count) elements \(JSONText.compact(actual))"))
                }
                for index in 0..<min(expectedElements.count, actualElements.count) {
                    compare(
                        expectedElements[index], actualElements[index], at: path.appending(index: index), rules: rules,
                        applied: applied, into: &found)
                }
            } else {
                if let minimum = applied.minItems, actualElements.count < minimum {
                    found.append(
                        Mismatch(
                            path: path.description, expected: "at least \(minimum) elements",
                            actual: "\(actualElements.count) elements \(JSONText.compact(actual))"))
                }
                guard !expectedElements.isEmpty else { return }
                for (index, element) in actualElements.enumerated() {
                    // Each element is compared with the example's element at its place, or with the last.
                    compare(
                        expectedElements[min(index, expectedElements.count - 1)], element, at: path.appending(index: index),
                        rules: rules, applied: applied, into: &found)
                }
            }
        default:
            let matches =
                applied.kind == .equality
                ? expected == actual : JSONText.typeName(expected) == JSONText.typeName(actual)
            if !matches {
                found.append(
                    Mismatch(path: path.description, expected: expectation(expected, applied), actual: JSONText.described(actual)))
            }
        }
    }

    /// What the contract asks for at a node, in words.
    private static func expectation(_ expected: JSONValue, _ applied: Applied) -> String {
        switch applied.kind {
        case .regex: "a string matching /\(applied.regex ?? "")/"
        case .integer: "an integer"
        case .type: "\(JSONText.typeName(expected)) like \(JSONText.compact(expected)) (by type)"
        case .equality: JSONText.compact(expected)
        }
    }

    /// Whether `pattern` matches the whole of `text`; a pattern that does not compile matches nothing.
    package static func fullyMatches(_ text: String, _ pattern: String) -> Bool {
        guard let expression = try? NSRegularExpression(pattern: "^(?:\(pattern))$", options: [.dotMatchesLineSeparators])
        else { return false }
        return expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
    }
}
