import Foundation
import JSON
import RPC
import ServiceTestSupport

/// Message-like types and seeded generators shared by the JSON codec tests.
enum JSONSamples {
    /// A string-backed enum, as our contracts use for statuses.
    enum Colour: String, Codable, CaseIterable {
        case red = "RED"
        case green = "GREEN"
        case blue = "BLUE"
    }

    /// An integer-backed enum.
    enum Priority: Int, Codable, CaseIterable {
        case low = 1
        case high = 2
    }

    /// A nested struct.
    struct Money: Codable, Equatable {
        var amount: Int64
        var currency: String
    }

    /// Every field kind our messages use, declared out of key order on purpose.
    struct Product: Codable, Equatable {
        var name: String
        var id: String
        var price: Money
        var tags: [String]
        var rating: Double?
        var stock: Int
        var active: Bool
        var colour: Colour
        var priority: Priority?
        var attributes: [String: String]
        var variants: [Product]?
        var details: JSONValue?
        var ratio: Float
        var small: Int8
        var unsigned: UInt32
        var big: UInt64
        var counts: [String: [Int]]
    }

    /// Fixed strings that exercise escaping: quotes, backslashes, slashes, control characters,
    /// DEL, non-ASCII, astral scalars, line separators.
    static let trickyStrings = [
        "", "plain", "with \"quotes\" and \\backslash\\", "a/b/c", "line\nbreak\r\n\ttab",
        "\u{0}\u{1}\u{8}\u{C}\u{1F}\u{7F}", "héllo wörld ✓", "😀 emoji 👩‍👩‍👧", "\u{2028}\u{2029}", "e\u{301} decomposed",
        String(repeating: "long ", count: 40),
    ]

    /// A random string: ASCII, escapes and non-ASCII mixed.
    static func string(_ random: inout SeededGenerator) -> String {
        if Int.random(in: 0..<4, using: &random) == 0 { return trickyStrings.randomElement(using: &random) ?? "" }
        let alphabet: [Unicode.Scalar] = [
            "a", "b", "z", "A", "0", "9", " ", "_", "-", "/", "\"", "\\", "\n", "\t", "\u{1}", "\u{7F}", "é", "ß", "✓", "中",
            "😀", "\u{2028}",
        ]
        var scalars = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0..<24, using: &random) {
            scalars.append(alphabet.randomElement(using: &random) ?? "a")
        }
        return String(scalars)
    }

    /// A random finite Double: integral, fractional, tiny, huge, negative zero.
    static func double(_ random: inout SeededGenerator) -> Double {
        switch Int.random(in: 0..<7, using: &random) {
        case 0: return Double(Int.random(in: -1_000_000...1_000_000, using: &random))
        case 1: return Double.random(in: -1000...1000, using: &random)
        case 2: return Double(bitPattern: random.next() & 0x7FEF_FFFF_FFFF_FFFF)
        case 3: return -Double(bitPattern: random.next() & 0x7FEF_FFFF_FFFF_FFFF)
        case 4: return [0.0, -0.0, 0.1, 1e15, 1e16, 9_007_199_254_740_992, .leastNonzeroMagnitude, .greatestFiniteMagnitude][Int.random(in: 0..<8, using: &random)]
        case 5: return Double(Int64.random(in: -(1 << 62)...(1 << 62), using: &random))
        default: return Double.random(in: 0..<1, using: &random) * pow(10, Double(Int.random(in: -30...30, using: &random)))
        }
    }

    /// A random JSON value tree, at most `depth` levels deep.
    static func value(_ random: inout SeededGenerator, depth: Int = 4) -> JSONValue {
        let kinds = depth > 0 ? 6 : 4
        switch Int.random(in: 0..<kinds, using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2: return .number(double(&random))
        case 3: return .string(string(&random))
        case 4: return .array((0..<Int.random(in: 0..<5, using: &random)).map { _ in value(&random, depth: depth - 1) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0..<6, using: &random) { members[string(&random)] = value(&random, depth: depth - 1) }
            return .object(members)
        }
    }

    /// A random product, with optional fields sometimes absent.
    static func product(_ random: inout SeededGenerator, depth: Int = 1) -> Product {
        var attributes: [String: String] = [:]
        for _ in 0..<Int.random(in: 0..<4, using: &random) { attributes[string(&random)] = string(&random) }
        var counts: [String: [Int]] = [:]
        for _ in 0..<Int.random(in: 0..<3, using: &random) {
            counts[string(&random)] = (0..<Int.random(in: 0..<4, using: &random)).map { _ in Int.random(in: Int.min...Int.max, using: &random) }
        }
        return Product(
            name: string(&random), id: "p-\(random.next() % 100_000)",
            price: Money(amount: Int64.random(in: Int64.min...Int64.max, using: &random), currency: "EUR"),
            tags: (0..<Int.random(in: 0..<4, using: &random)).map { _ in string(&random) },
            rating: Bool.random(using: &random) ? double(&random) : nil, stock: Int.random(in: -5...1000, using: &random),
            active: Bool.random(using: &random), colour: Colour.allCases.randomElement(using: &random) ?? .red,
            priority: Bool.random(using: &random) ? Priority.allCases.randomElement(using: &random) : nil,
            attributes: attributes,
            variants: depth > 0 && Bool.random(using: &random)
                ? (0..<Int.random(in: 0..<3, using: &random)).map { _ in product(&random, depth: depth - 1) } : nil,
            // A JSONValue? of .null reads back as nil, with any decoder.
            details: Bool.random(using: &random) ? value(&random, depth: 2).nonNull : nil,
            ratio: Float(bitPattern: UInt32(truncatingIfNeeded: random.next()) & 0x7EFF_FFFF),
            small: Int8.random(in: Int8.min...Int8.max, using: &random),
            unsigned: UInt32.random(in: 0...UInt32.max, using: &random), big: random.next(), counts: counts)
    }

    /// Foundation's encoder configured as `JSONCodec` used to be: the reference output.
    static func foundationEncode<Value: Encodable>(_ value: Value) throws -> Data {
        let encoder = Foundation.JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }
}

extension JSONValue {
    /// Nil for `.null`, else the value.
    fileprivate var nonNull: JSONValue? { self == .null ? nil : self }
}

/// A coding key made from any string, for hand-written containers in the codec tests.
struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
