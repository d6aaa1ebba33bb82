import Foundation
import JSON
import RPC
import Testing

@Suite("JSONValue")
struct JSONValueTests {
    private static func encode(_ value: JSONValue) throws -> String {
        String(decoding: try JSONCodec.shared.encode(value), as: UTF8.self)
    }

    private static func decode(_ json: String) throws -> JSONValue {
        try JSONCodec.shared.decode(JSONValue.self, from: Data(json.utf8))
    }

    @Test(
        "whole numbers are written as integers, fractions as numbers",
        arguments: [
            (JSONValue.number(42), "42"),
            (.number(-7), "-7"),
            (.number(0), "0"),
            (.number(1_000_000_000_000), "1000000000000"),
            (.number(1.5), "1.5"),
            (.number(-0.25), "-0.25"),
        ])
    func numbers(value: JSONValue, json: String) throws {
        #expect(try Self.encode(value) == json)
        #expect(try Self.decode(json) == value)
    }

    @Test("a nested value survives a round trip, integers staying integers")
    func roundTrip() throws {
        let value = JSONValue.object([
            "count": .number(3),
            "price": .object(["amount": .number(1999), "currency": .string("USD")]),
            "rate": .number(4.5),
            "tags": .array([.string("a"), .bool(true), .bool(false), .null, .number(-1)]),
            "empty": .object([:]),
            "none": .array([]),
            "text": .string("héllo ✓ \"quoted\" / \n"),
        ])
        let json = try Self.encode(value)
        #expect(json.contains(#""amount":1999"#))
        #expect(json.contains(#""count":3"#))
        #expect(!json.contains("1999.0"))
        #expect(try Self.decode(json) == value)
        #expect(try Self.encode(Self.decode(json)) == json)
    }

    @Test(
        "each JSON kind decodes to its case",
        arguments: [
            ("null", JSONValue.null), ("true", .bool(true)), ("false", .bool(false)), ("0", .number(0)),
            ("1", .number(1)), ("\"1\"", .string("1")), ("\"true\"", .string("true")), ("[1]", .array([.number(1)])),
            ("{\"a\":null}", .object(["a": .null])),
        ])
    func kinds(json: String, value: JSONValue) throws {
        #expect(try Self.decode(json) == value)
    }

    @Test("the accessors read objects, strings and arrays and are nil otherwise")
    func accessors() {
        let value = JSONValue.object(["name": .string("x"), "list": .array([.null])])
        #expect(value["name"]?.stringValue == "x")
        #expect(value["list"]?.arrayValue == [.null])
        #expect(value["missing"] == nil)
        #expect(value.stringValue == nil)
        #expect(value.arrayValue == nil)
        #expect(JSONValue.string("s")["name"] == nil)
        #expect(JSONValue.number(1).stringValue == nil)
    }
}
