import Foundation
import JSON
import RPC
import Testing

/// The decoder's grammar: what is valid JSON, what is not, and what strings and numbers mean.
@Suite("JSON decoder grammar")
struct JSONDecoderTests {
    private static func decode<Value: Decodable>(_ type: Value.Type, _ json: String) throws(RPCError) -> Value {
        try JSONCodec.shared.decode(type, from: Data(json.utf8))
    }

    private static func decode<Value: Decodable>(_ type: Value.Type, bytes: [UInt8]) throws(RPCError) -> Value {
        try JSONCodec.shared.decode(type, from: Data(bytes))
    }

    private static func expectMalformed(_ body: () throws(RPCError) -> Void) {
        do {
            try body()
            Issue.record("expected MALFORMED_MESSAGE")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.reason == "MALFORMED_MESSAGE")
            #expect(error.cause != nil)
        }
    }

    @Test(
        "valid documents decode",
        arguments: [
            ("null", JSONValue.null), (" true ", .bool(true)), ("\t\r\n false", .bool(false)), ("-0", .number(0)),
            ("[]", .array([])), ("[ ]", .array([])), ("{}", .object([:])), ("{ \n}", .object([:])),
            ("[1,[2,[3]]]", .array([.number(1), .array([.number(2), .array([.number(3)])])])),
            (#"{"a":{"b":{}} , "c" : [ null ] }"#, .object(["a": .object(["b": .object([:])]), "c": .array([.null])])),
            ("\u{FEFF}{\"a\":1}", .object(["a": .number(1)])), ("1E+2", .number(100)), ("2.5e-1", .number(0.25)),
        ])
    func validDocuments(json: String, value: JSONValue) throws {
        #expect(try Self.decode(JSONValue.self, json) == value)
    }

    @Test(
        "invalid documents are MALFORMED_MESSAGE",
        arguments: [
            "", " ", "nul", "tru", "True", "NaN", "Infinity", "-", "01", "1.", ".5", "1e", "1e+", "+1", "0x10", "--1",
            "[1,]", "[,1]", "[1 2]", "{\"a\":1,}", "{,}", "{\"a\" 1}", "{\"a\":}", "{a:1}", "{'a':1}", "[1]]", "[[1]",
            "{\"a\":1}}", "\"unterminated", "[\"a\"\"b\"]", "1 2", "{} x", "[1]\u{0}", "\u{A0}1", "\u{C}1", "/* c */ 1",
        ])
    func invalidDocuments(json: String) {
        Self.expectMalformed { () throws(RPCError) in _ = try Self.decode(JSONValue.self, json) }
    }

    @Test(
        "string escapes decode to the characters they stand for",
        arguments: [
            (#""\"\\\/\b\f\n\r\t""#, "\"\\/\u{8}\u{C}\n\r\t"), (#""\u0041\u00e9\u4E2D""#, "Aé中"),
            (#""\ud83d\ude00 \uD83D\uDE00""#, "😀 😀"), (#""\u0000""#, "\u{0}"), ("\"\u{7F}é✓😀\"", "\u{7F}é✓😀"),
            (#""a\u0022b""#, "a\"b"), ("\"\(String(repeating: "x", count: 100))\\n\"", String(repeating: "x", count: 100) + "\n"),
        ])
    func escapes(json: String, expected: String) throws {
        #expect(try Self.decode(String.self, json) == expected)
    }

    @Test(
        "bad escapes, lone surrogates and raw control characters are rejected",
        arguments: [
            #""\x""#, #""\u12""#, #""\u12G4""#, #""\ud800""#, #""\udc00""#, #""\ud800\u0041""#, #""\ud800x""#,
            #""\udc00\ud800""#, "\"a\u{0}b\"", "\"tab\there\"", "\"new\nline\"", "\"\u{1F}\"", #""\"#, #""\u"#,
        ])
    func badStrings(json: String) {
        Self.expectMalformed { () throws(RPCError) in _ = try Self.decode(String.self, json) }
    }

    @Test(
        "invalid UTF-8 is rejected anywhere in the document",
        arguments: [
            [0xFF], [0xC0, 0x80], [0xC1, 0xBF], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
            [0xF5, 0x80, 0x80, 0x80], [0xE2, 0x82], [0x80], [0xC3], [0xF0, 0x9F, 0x98],
        ] as [[UInt8]])
    func invalidUTF8(sequence: [UInt8]) {
        let read = Array(#"{"a":""#.utf8) + sequence + Array(#""}"#.utf8)
        let ignored = Array(#"{"b":""#.utf8) + sequence + Array(#"","a":"x"}"#.utf8)
        Self.expectMalformed { () throws(RPCError) in _ = try Self.decode([String: String].self, bytes: read) }
        Self.expectMalformed { () throws(RPCError) in _ = try Self.decode([String: String].self, bytes: ignored) }
    }

    @Test("valid multi-byte UTF-8 at every length decodes")
    func validUTF8() throws {
        let text = "\u{80}\u{7FF}\u{800}\u{D7FF}\u{E000}\u{FFFF}\u{10000}\u{10FFFF}"
        #expect(try Self.decode([String].self, bytes: Array("[\"\(text)\"]".utf8)) == [text])
    }

    @Test(
        "integers decode only from integer literals within range",
        arguments: [
            ("0", 0), ("-0", 0), ("42", 42), ("-9223372036854775808", Int.min), ("9223372036854775807", Int.max),
        ])
    func integers(json: String, value: Int) throws {
        #expect(try Self.decode(Int.self, json) == value)
    }

    @Test(
        "a fraction, an exponent or an out-of-range value is not an integer",
        arguments: ["1.0", "1e2", "1E0", "-1.5", "9223372036854775808", "-9223372036854775809", "\"1\"", "true"])
    func notIntegers(json: String) {
        Self.expectMalformed { () throws(RPCError) in _ = try Self.decode(Int.self, json) }
    }

    @Test("each integer type checks its own range")
    func integerRanges() throws {
        #expect(try Self.decode([Int8].self, "[-128,127]") == [-128, 127])
        #expect(try Self.decode([UInt8].self, "[0,255,-0]") == [0, 255, 0])
        #expect(try Self.decode([UInt64].self, "[18446744073709551615]") == [UInt64.max])
        #expect(try Self.decode([Int16].self, "[-32768,32767]") == [-32768, 32767])
        for (type, json) in [(Int8.self as any Decodable.Type, "128"), (UInt8.self, "256"), (UInt8.self, "-1"),
            (UInt64.self, "18446744073709551616"), (Int32.self, "2147483648"), (UInt.self, "-1")]
        {
            Self.expectMalformed { () throws(RPCError) in _ = try JSONCodec.shared.decode(type, from: Data(json.utf8)) }
        }
    }

    @Test("doubles decode from any number; beyond Double's range is rejected")
    func doubles() throws {
        #expect(try Self.decode([Double].self, "[1,-0,1.5,1e3,-2.5E-3,123456789012345678901234567890]")
            == [1, -0.0, 1.5, 1000, -0.0025, 1.2345678901234568e29])
        #expect(try Self.decode(Double.self, "-0").sign == .minus)
        #expect(try Self.decode(Float.self, "0.1") == Float(0.1))
        #expect(try Self.decode([Double].self, "[0e-999,-0.0e5,5e-324]") == [0, 0, .leastNonzeroMagnitude])
        Self.expectMalformed { () throws(RPCError) in _ = try Self.decode(Double.self, "1e400") }
        Self.expectMalformed { () throws(RPCError) in _ = try Self.decode(Double.self, "-1e-400") }
        Self.expectMalformed { () throws(RPCError) in _ = try Self.decode(Float.self, "1e39") }
        Self.expectMalformed { () throws(RPCError) in _ = try Self.decode(Double.self, "\"NaN\"") }
    }

    @Test("nesting deeper than 64 levels is rejected without touching the stack")
    func depthLimit() throws {
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(try Self.decode(JSONValue.self, ok) != .null)
        for depth in [65, 100_000] {
            let deep = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            Self.expectMalformed { () throws(RPCError) in _ = try Self.decode(JSONValue.self, deep) }
        }
        let objects = String(repeating: #"{"a":"#, count: 65) + "1" + String(repeating: "}", count: 65)
        Self.expectMalformed { () throws(RPCError) in _ = try Self.decode(JSONValue.self, objects) }
    }

    @Test("unknown members of any shape are skipped, even large ones")
    func skipsUnknown() throws {
        struct Small: Decodable, Equatable { var id: Int }
        let big = (0..<2000).map { #"{"k\#($0)":[\#($0),"\#($0)",null,{"x":true}]}"# }.joined(separator: ",")
        #expect(try Self.decode(Small.self, #"{"junk":[\#(big)],"id":7,"more":"\u0041"}"#) == Small(id: 7))
    }
}
