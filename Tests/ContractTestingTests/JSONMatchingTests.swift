import ContractTesting
import RPC
import Testing
import JSON

/// The matchers of contract files, on hand-written JSON: equality by default, type, integer,
/// regex, extra fields, cascading to deeper paths and overriding there.
@Suite("JSON matching")
struct JSONMatchingTests {
    /// The example every test compares against.
    static let product: JSONValue = .object([
        "id": .number(7), "title": .string("Backpack"),
        "price": .object(["amount": .number(1999), "currency": .string("USD")]),
        "tags": .array([.string("bags"), .string("travel")]),
    ])

    /// The mismatches of `actual` against ``product`` under `rules`, as text.
    func mismatches(_ actual: JSONValue, _ rules: [String: Matcher] = [:]) throws -> [String] {
        try JSONMatching.mismatches(expected: Self.product, actual: actual, rules: rules).map(\.description)
    }

    /// ``product`` with the value at `path` replaced.
    func changing(_ path: String, to value: JSONValue) throws -> JSONValue {
        let parsed = try #require(JSONPath(parsing: path))
        return try #require(Self.product.setting(value, at: parsed))
    }

    @Test("without matchers a value must equal the example exactly")
    func equalityByDefault() throws {
        #expect(try mismatches(Self.product) == [])
        #expect(
            try mismatches(changing("$.title", to: .string("Bag")))
                == [#"$.title: expected "Backpack", actual a string "Bag""#])
        #expect(
            try mismatches(changing("$.tags", to: .array([.string("bags")])))
                == [#"$.tags: expected 2 elements ["bags","travel"], actual 1 elements ["bags"]"#])
    }

    @Test("a missing field and an extra field are each named with their path")
    func missingAndExtraFields() throws {
        var members = Self.product.objectMembers
        members["title"] = nil
        members["name"] = .string("Backpack")
        #expect(
            try mismatches(.object(members)) == [
                #"$.title: expected "Backpack", actual nothing (the field is missing)"#,
                #"$.name: expected no such field (the contract allows no extra fields here), actual a string "Backpack""#,
            ])
    }

    @Test("extra fields are accepted where a matcher allows them, and below it")
    func extraFieldsAllowed() throws {
        let extended = try changing("$.price", to: .object(["amount": .number(1999), "currency": .string("USD"), "tax": .number(0)]))
        #expect(try mismatches(extended).count == 1)
        #expect(try mismatches(extended, ["$": Matcher.equality.allowingExtraFields]) == [])
        #expect(try mismatches(extended, ["$.price": Matcher.equality.allowingExtraFields]) == [])
        #expect(
            try mismatches(extended, ["$": Matcher.equality.allowingExtraFields, "$.price": Matcher(match: .equality, extraFieldsAllowed: false)])
                .count == 1)
    }

    @Test("a type matcher cascades to everything beneath it until a deeper matcher overrides it")
    func typeCascadesAndIsOverridden() throws {
        let other: JSONValue = .object([
            "id": .number(8), "title": .string("Tent"),
            "price": .object(["amount": .number(25000), "currency": .string("EUR")]),
            "tags": .array([.string("outdoor")]),
        ])
        #expect(try mismatches(other, ["$": .type]) == [])
        #expect(try mismatches(other, ["$": .type, "$.id": .equality]) == ["$.id: expected 7, actual a number 8"])
        #expect(
            try mismatches(changing("$.price", to: .string("19.99")), ["$": .type]) == [
                #"$.price: expected an object like {"amount":1999,"currency":"USD"} (by type), actual a string "19.99""#
            ])
    }

    @Test("array elements matched by type follow the example, and may number at least minItems")
    func arraysByType() throws {
        let many = try changing("$.tags", to: .array([.string("a"), .string("b"), .string("c")]))
        #expect(try mismatches(many, ["$.tags": .type]) == [])
        let wrong = try changing("$.tags", to: .array([.string("a"), .number(3)]))
        #expect(try mismatches(wrong, ["$.tags": .type]) == [#"$.tags[1]: expected a string like "travel" (by type), actual a number 3"#])
        let empty = try changing("$.tags", to: .array([]))
        #expect(try mismatches(empty, ["$.tags": .type(minItems: 1)]) == ["$.tags: expected at least 1 elements, actual 0 elements []"])
    }

    @Test("regex and integer matchers check strings and whole numbers", arguments: [
        (JSONValue.string("Tent"), true), (.string("tent!"), false), (.number(3), false),
    ])
    func regexMatcher(value: JSONValue, matches: Bool) throws {
        let found = try mismatches(try changing("$.title", to: value), ["$.title": .regex("[A-Z][a-z]+")])
        #expect(found.isEmpty == matches, "\(found)")
    }

    @Test("the integer matcher refuses fractions and strings")
    func integerMatcher() throws {
        #expect(try mismatches(try changing("$.id", to: .number(12)), ["$.id": .integer]) == [])
        #expect(try mismatches(try changing("$.id", to: .number(1.5)), ["$.id": .integer]) == ["$.id: expected an integer, actual a number 1.5"])
        #expect(try mismatches(try changing("$.id", to: .string("7")), ["$.id": .integer]).count == 1)
    }

    @Test("wildcard paths apply to every element, and the most specific path wins")
    func wildcards() throws {
        let list: JSONValue = .object(["items": .array([.object(["id": .string("a"), "n": .number(1)])])])
        let actual: JSONValue = .object([
            "items": .array([.object(["id": .string("x-1"), "n": .number(1)]), .object(["id": .string("x-2"), "n": .number(2)])])
        ])
        let rules: [String: Matcher] = ["$.items": .type, "$.items[*].id": .regex("x-[0-9]"), "$.items[1].n": .equality]
        let found = try JSONMatching.mismatches(expected: list, actual: actual, rules: rules).map(\.description)
        #expect(found == ["$.items[1].n: expected 1, actual a number 2"])
    }

    @Test("a path that does not parse is refused with its text", arguments: ["product.id", "$.a[", "$..b", "$.a[x]"])
    func badPaths(path: String) {
        #expect(throws: ContractError.self) { try MatchingRuleSet([path: .type]) }
    }

    @Test("paths print back as they parse", arguments: ["$", "$.a.b", "$.items[0].id", "$.items[*].id", "$.*", "$['x-api-key']"])
    func pathsRoundTrip(path: String) throws {
        #expect(try #require(JSONPath(parsing: path)).description == path)
    }
}
