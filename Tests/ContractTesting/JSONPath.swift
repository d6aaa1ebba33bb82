/// A path into a JSON value as contracts write it: `$` for the whole message, `.name` for an
/// object member (`['x-y']` when the name is not an identifier), `[3]` for an array element.
/// Patterns may use `[*]` (any element) and `.*` (any member).
package struct JSONPath: Hashable, Sendable, CustomStringConvertible {
    /// One step.
    package enum Segment: Hashable, Sendable {
        /// An object member.
        case key(String)
        /// An array element.
        case index(Int)
        /// Any object member (patterns only).
        case anyKey
        /// Any array element (patterns only).
        case anyIndex
    }

    /// The steps from the root.
    package var segments: [Segment]

    /// The whole value.
    package static let root = JSONPath(segments: [])

    /// A path of `segments`.
    package init(segments: [Segment]) { self.segments = segments }

    /// Parses `$`, `$.a.b`, `$.items[0].id`, `$.items[*].id`, `$.*`, `$['x-api-key']`; nil for anything else.
    package init?(parsing text: String) {
        var rest = Substring(text)
        guard rest.first == "$" else { return nil }
        rest = rest.dropFirst()
        var segments: [Segment] = []
        while let first = rest.first {
            if first == "." {
                rest = rest.dropFirst()
                let name = rest.prefix { $0 != "." && $0 != "[" }
                guard !name.isEmpty else { return nil }
                segments.append(name == "*" ? .anyKey : .key(String(name)))
                rest = rest.dropFirst(name.count)
            } else if first == "[" {
                guard let close = rest.firstIndex(of: "]") else { return nil }
                let inside = rest[rest.index(after: rest.startIndex)..<close]
                if inside == "*" {
                    segments.append(.anyIndex)
                } else if let index = Int(inside), index >= 0 {
                    segments.append(.index(index))
                } else if inside.count >= 2, inside.first == "'", inside.last == "'" {
                    segments.append(.key(String(inside.dropFirst().dropLast())))
                } else {
                    return nil
                }
                rest = rest[rest.index(after: close)...]
            } else {
                return nil
            }
        }
        self.segments = segments
    }

    /// This path with an object member appended.
    package func appending(key: String) -> JSONPath { JSONPath(segments: segments + [.key(key)]) }

    /// This path with an array element appended.
    package func appending(index: Int) -> JSONPath { JSONPath(segments: segments + [.index(index)]) }

    /// Whether this pattern names `path` (a concrete path: no wildcards).
    package func matches(_ path: JSONPath) -> Bool {
        guard segments.count == path.segments.count else { return false }
        return zip(segments, path.segments).allSatisfy { pattern, step in
            switch (pattern, step) {
            case (.anyKey, .key), (.anyIndex, .index): true
            default: pattern == step
            }
        }
    }

    /// How many wildcards the pattern has; fewer is more specific.
    package var wildcardCount: Int {
        segments.count { $0 == .anyKey || $0 == .anyIndex }
    }

/// The path as contracts write it.
    package var description: String {
        "$"
            + segments.map { segment in
                switch segment {
                case .key(let name):
                    name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" } && !name.isEmpty ? ".\(name)" : "['\(name)']"
                case .index(let index): "[\(index)]"
                case .anyKey: ".*"
                case .anyIndex: "[*]"
                }
            }.joined()
    }
}

/// Matchers by JSON path pattern, parsed once; answers which matcher a concrete path has.
package struct MatchingRuleSet: Sendable {
    private let rules: [(pattern: JSONPath, text: String, matcher: Matcher)]

    /// The rules of a contract; a path that does not parse is an error naming it.
    package init(_ rules: [String: Matcher]) throws(ContractError) {
        var parsed: [(JSONPath, String, Matcher)] = []
        for (text, matcher) in rules.sorted(by: { $0.key < $1.key }) {
            guard let pattern = JSONPath(parsing: text) else {
                throw ContractError("'\(text)' is not a JSON path ($, $.name, $.list[0], $.list[*])")
            }
            if matcher.match == .regex, matcher.regex == nil {
                throw ContractError("the regex matcher at \(text) has no regex")
            }
            parsed.append((pattern, text, matcher))
        }
        self.rules = parsed
    }

    /// The matcher written for exactly `path` (the most specific pattern naming it), if any.
    package func matcher(at path: JSONPath) -> Matcher? {
        rules.filter { $0.pattern.matches(path) }
            .min { ($0.pattern.wildcardCount, $0.text) < ($1.pattern.wildcardCount, $1.text) }?.matcher
    }
}
