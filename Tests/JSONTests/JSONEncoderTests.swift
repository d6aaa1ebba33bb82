import Foundation
@testable import JSON
import RPC
import Testing

/// The encoder's output: escaping, numbers, key order, and the container patterns hand-written
/// `encode(to:)` uses, each checked against Foundation's encoder where it applies.
@Suite("JSON encoder")
struct JSONEncoderTests {
    private static func json(_ value: some Encodable) throws -> String {
        String(decoding: try JSONCodec.shared.encode(value), as: UTF8.self)
    }

    /// Checks that our output equals Foundation's and returns it.
    @discardableResult
    private static func expectFoundationOutput(_ value: some Encodable) throws -> String {
        let ours = try json(value)
        #expect(ours == String(decoding: try JSONSamples.foundationEncode(value), as: UTF8.self))
        return ours
    }

    @Test(
        "strings escape only quotes, backslashes and control characters",
        arguments: [
            ("a\"b\\c/d", #""a\"b\\c/d""#), ("\n\r\t\u{8}\u{C}", #""\n\r\t\b\f""#), ("\u{0}\u{1}\u{1F}", #""\u0000\u0001\u001f""#),
            ("\u{7F}é✓😀\u{2028}", "\"\u{7F}é✓😀\u{2028}\""), ("", #""""#), ("12345678\"", #""12345678\"""#),
        ])
    func escaping(string: String, expected: String) throws {
        #expect(try Self.json(string) == expected)
        try Self.expectFoundationOutput([string: string])
    }

    @Test("keys are sorted however they were encoded, and match Foundation's order")
    func sortedKeys() throws {
        struct Declared: Encodable { var zeta = 1, alpha = 2, mid = 3, Alpha = 4, _under = 5, a10 = 6, a9 = 7 }
        #expect(try Self.expectFoundationOutput(Declared()) == #"{"Alpha":4,"_under":5,"a10":6,"a9":7,"alpha":2,"mid":3,"zeta":1}"#)
        let keys = ["b", "B", "a", "_", "10", "9", "é", "z", "aa", "a1", "ä", "\"q", "a\\b", "\n", "\u{7F}", "\u{E000}", "\u{FFFD}", "😀", "longer-key-1", "longer-key-0"]
        try Self.expectFoundationOutput(Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, $0) }))
        // Keys compare by scalars without normalization: a decomposed "é" sorts by its "e".
        struct Decomposed: Encodable {
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: AnyKey.self)
                for key in ["\u{E9}x", "f", "e\u{301}", "\u{7F}"] { try container.encode(1, forKey: AnyKey(key)) }
            }
        }
        #expect(try Self.json(Decomposed()) == "{\"e\u{301}\":1,\"f\":1,\"\u{7F}\":1,\"\u{E9}x\":1}")
        let many = Dictionary(uniqueKeysWithValues: (0..<300).map { ("key\(($0 * 7919) % 300)", $0) })
        try Self.expectFoundationOutput(many)
    }

    @Test("a key written twice keeps the last value, as in Foundation")
    func duplicateKeys() throws {
        struct Twice: Encodable {
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: AnyKey.self)
                try container.encode(1, forKey: AnyKey("b"))
                try container.encode(2, forKey: AnyKey("a"))
                try container.encode(3, forKey: AnyKey("b"))
            }
        }
        #expect(try Self.expectFoundationOutput(Twice()) == #"{"a":2,"b":3}"#)
    }

    @Test("optionals are omitted when nil, explicit nulls are written, enums use raw values")
    func optionalsAndEnums() throws {
        struct Message: Encodable {
            var absent: String? = nil
            var present: Int? = 5
            var colour = JSONSamples.Colour.green
            var priority = JSONSamples.Priority.high
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: AnyKey.self)
                try container.encodeIfPresent(absent, forKey: AnyKey("absent"))
                try container.encodeIfPresent(present, forKey: AnyKey("present"))
                try container.encodeNil(forKey: AnyKey("null"))
                try container.encode(colour, forKey: AnyKey("colour"))
                try container.encode(priority, forKey: AnyKey("priority"))
            }
        }
        #expect(try Self.expectFoundationOutput(Message()) == #"{"colour":"GREEN","null":null,"present":5,"priority":2}"#)
    }

    @Test("nested containers and super encoders can be filled in any order")
    func nestedContainers() throws {
        struct Shape: Encodable {
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: AnyKey.self)
                var list = container.nestedUnkeyedContainer(forKey: AnyKey("list"))
                var object = container.nestedContainer(keyedBy: AnyKey.self, forKey: AnyKey("object"))
                try container.encode("after", forKey: AnyKey("plain"))
                try object.encode(1, forKey: AnyKey("z"))
                try list.encode("first")
                var inner = list.nestedContainer(keyedBy: AnyKey.self)
                try list.encode("third")
                try inner.encode(true, forKey: AnyKey("second"))
                var deeper = list.nestedUnkeyedContainer()
                try deeper.encode(4.5)
                try object.encode([1, 2], forKey: AnyKey("a"))
                _ = container.nestedContainer(keyedBy: AnyKey.self, forKey: AnyKey("empty"))
                var superValue = container.superEncoder().singleValueContainer()
                try superValue.encode("super")
                var named = container.superEncoder(forKey: AnyKey("named")).container(keyedBy: AnyKey.self)
                try named.encode(Optional<Int>.none, forKey: AnyKey("x"))
                var superList = list.superEncoder().unkeyedContainer()
                try superList.encode(7)
            }
        }
        #expect(
            try Self.expectFoundationOutput(Shape())
                == #"{"empty":{},"list":["first",{"second":true},"third",[4.5],[7]],"named":{"x":null},"object":{"a":[1,2],"z":1},"plain":"after","super":"super"}"#
        )
    }

    @Test("class hierarchies encode through super encoders and shared containers as in Foundation")
    func classHierarchy() throws {
        class Base: Encodable {
            var id = "base"
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: AnyKey.self)
                try container.encode(id, forKey: AnyKey("id"))
            }
        }
        final class Shared: Base {
            override func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: AnyKey.self)
                try container.encode("shared", forKey: AnyKey("kind"))
                try super.encode(to: encoder)
                try container.encode(2, forKey: AnyKey("after"))
            }
        }
        final class Separate: Base {
            override func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: AnyKey.self)
                try container.encode("separate", forKey: AnyKey("kind"))
                try super.encode(to: container.superEncoder())
            }
        }
        #expect(try Self.expectFoundationOutput(Shared()) == #"{"after":2,"id":"base","kind":"shared"}"#)
        #expect(try Self.expectFoundationOutput(Separate()) == #"{"kind":"separate","super":{"id":"base"}}"#)
        #expect(try Self.expectFoundationOutput([Shared(), Separate()]).hasPrefix("[{"))
    }

    @Test("values that encode nothing are empty objects; a top-level one is an error")
    func emptyValues() throws {
        struct Nothing: Encodable { func encode(to encoder: any Encoder) throws {} }
        struct Empty: Encodable {}
        #expect(try Self.expectFoundationOutput([Nothing()]) == "[{}]")
        #expect(try Self.expectFoundationOutput(Empty()) == "{}")
        #expect(try Self.expectFoundationOutput(["a": [Empty]()]) == #"{"a":[]}"#)
        let error = try #require(throws: RPCError.self) { try JSONCodec.shared.encode(Nothing()) }
        #expect(error.code == .internal)
    }

    @Test("top-level scalars and JSON values encode as themselves")
    func scalars() throws {
        #expect(try Self.expectFoundationOutput(42) == "42")
        #expect(try Self.expectFoundationOutput("x") == #""x""#)
        #expect(try Self.expectFoundationOutput(Optional<Int>.none) == "null")
        #expect(try Self.json(JSONValue.object(["b": .array([.null, .bool(true)]), "a": .number(1.25)])) == #"{"a":1.25,"b":[null,true]}"#)
    }

    @Test("a non-finite number is an EncodingError naming its path")
    func nonFinite() throws {
        struct Inner: Encodable { var value: Double }
        struct Outer: Encodable { var items: [Inner] }
        for value in [Double.nan, .infinity, -.infinity] {
            let outer = Outer(items: [Inner(value: 1), Inner(value: value)])
            let error = try #require(throws: EncodingError.self) { try JSON.JSONEncoder.encode(outer) }
            guard case .invalidValue(_, let context) = error else { throw error }
            #expect(context.codingPath.map(\.stringValue) == ["items", "Index 1", "value"])
            #expect(throws: EncodingError.self) { try JSON.JSONEncoder.encode([value]) }
            #expect(throws: EncodingError.self) { try JSON.JSONEncoder.encode(value) }
            #expect(throws: EncodingError.self) { try JSON.JSONEncoder.encode(["f": Float(value)]) }
        }
    }

    @Test("the coding path an encoder reports names keys and indices")
    func codingPaths() throws {
        final class Recorder: Encodable, @unchecked Sendable {
            // Written only during the single-threaded encode below.
            var paths: [String] = []
            func encode(to encoder: any Encoder) throws {
                paths.append(encoder.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined())
                var container = encoder.singleValueContainer()
                try container.encode(0)
            }
        }
        let recorder = Recorder()
        _ = try JSON.JSONEncoder.encode(["outer": ["a": [recorder, recorder]]])
        #expect(recorder.paths == [".outer.a[0]", ".outer.a[1]"])
    }

    @Test("a value whose encoding failed and was caught leaves no trace, as in Foundation")
    func caughtFailure() throws {
        struct Boom: Error {}
        struct Failing: Encodable {
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: AnyKey.self)
                try container.encode(1, forKey: AnyKey("x"))
                var nested = container.nestedUnkeyedContainer(forKey: AnyKey("n"))
                try nested.encode(2)
                try container.encode(["deep": [3]], forKey: AnyKey("d"))
                throw Boom()
            }
        }
        struct Outer: Encodable {
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: AnyKey.self)
                try container.encode(0, forKey: AnyKey("a"))
                try? container.encode(Failing(), forKey: AnyKey("bad"))
                try container.encode(3, forKey: AnyKey("z"))
                var list = container.nestedUnkeyedContainer(forKey: AnyKey("list"))
                try list.encode(1)
                try? list.encode(Failing())
                try list.encode(2)
            }
        }
        #expect(try Self.expectFoundationOutput(Outer()) == #"{"a":0,"list":[1,2],"z":3}"#)
        // Foundation's encoder traps on these, so only ours is checked.
        struct NonFinite: Encodable {
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: AnyKey.self)
                var list = container.nestedUnkeyedContainer(forKey: AnyKey("list"))
                try? list.encode([1.0, .nan])
                try list.encode(2)
                try? container.encode(["x": Double.infinity], forKey: AnyKey("inf"))
                var single = container.superEncoder().singleValueContainer()
                try? single.encode(["y": [Float.nan]])
                try single.encode(4)
            }
        }
        #expect(try Self.json(NonFinite()) == #"{"list":[2],"super":4}"#)
    }

    @Test("a container used after its value finished encoding is an error, not broken JSON")
    func staleContainer() throws {
        final class Stash: @unchecked Sendable {
            // Used only during the single-threaded encode below.
            var container: KeyedEncodingContainer<AnyKey>?
        }
        struct First: Encodable {
            let stash: Stash
            func encode(to encoder: any Encoder) throws {
                stash.container = encoder.container(keyedBy: AnyKey.self)
            }
        }
        struct Second: Encodable {
            let stash: Stash
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: AnyKey.self)
                try container.encode(1, forKey: AnyKey("ok"))
                try stash.container?.encode(2, forKey: AnyKey("stale"))
            }
        }
        struct Pair: Encodable {
            let stash = Stash()
            func encode(to encoder: any Encoder) throws {
                var container = encoder.unkeyedContainer()
                try container.encode(First(stash: stash))
                try container.encode(Second(stash: stash))
            }
        }
        #expect(throws: EncodingError.self) { try JSON.JSONEncoder.encode(Pair()) }
    }
}
