import Foundation
import JSON
import RPC
import Testing

/// The decoder's containers, as hand-written `init(from:)` uses them, and the field paths its
/// errors name.
@Suite("JSON decoder containers")
struct JSONDecoderContainerTests {
    private static func decode<Value: Decodable>(_ type: Value.Type, _ json: String) throws(RPCError) -> Value {
        try JSONCodec.shared.decode(type, from: Data(json.utf8))
    }

    /// The single field violation of a MALFORMED_MESSAGE error.
    private static func violation(_ json: String, as type: (some Decodable).Type) throws -> (field: String, problem: String) {
        let error = try #require(throws: RPCError.self) { try JSONCodec.shared.decode(type, from: Data(json.utf8)) }
        #expect(error.code == .invalidArgument)
        #expect(error.reason == "MALFORMED_MESSAGE")
        let violation = try #require(error.details?["fieldViolations"]?.arrayValue?.first)
        return (try #require(violation["field"]?.stringValue), try #require(violation["description"]?.stringValue))
    }

    @Test("an enum's unknown value is named in the client's terms, not the server's type")
    func unknownEnumValue() throws {
        enum Sort: String, Decodable { case priceAscending = "PRICE_ASC" }
        struct Request: Decodable { var sort: Sort? }
        let (field, problem) = try Self.violation(#"{"sort":"NOPE"}"#, as: Request.self)
        #expect(field == "sort")
        #expect(problem == "'NOPE' is not an allowed value")
    }

    @Test("keyed containers list keys, test presence and null, and let the last duplicate win")
    func keyedBasics() throws {
        struct Probe: Decodable {
            var keys: [String], hasA: Bool, hasZ: Bool, aIsNull: Bool, bIsNull: Bool, b: Int, optionalA: Int?, optionalZ: Int?
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: AnyKey.self)
                keys = container.allKeys.map(\.stringValue)
                (hasA, hasZ) = (container.contains(AnyKey("a")), container.contains(AnyKey("z")))
                (aIsNull, bIsNull) = (try container.decodeNil(forKey: AnyKey("a")), try container.decodeNil(forKey: AnyKey("b")))
                b = try container.decode(Int.self, forKey: AnyKey("b"))
                optionalA = try container.decodeIfPresent(Int.self, forKey: AnyKey("a"))
                optionalZ = try container.decodeIfPresent(Int.self, forKey: AnyKey("z"))
                var missingKeyFailed = false
                do { _ = try container.decodeNil(forKey: AnyKey("z")) } catch DecodingError.keyNotFound { missingKeyFailed = true }
                #expect(missingKeyFailed)
            }
        }
        let probe = try Self.decode(Probe.self, #"{"a":null,"b":1,"c":{},"b":2}"#)
        #expect(probe.keys == ["a", "b", "c"])
        #expect(probe.hasA && !probe.hasZ && probe.aIsNull && !probe.bIsNull)
        #expect(probe.b == 2)
        #expect(probe.optionalA == nil && probe.optionalZ == nil)
    }

    @Test("member names match through escapes and canonical equivalence")
    func keyMatching() throws {
        struct Named: Decodable, Equatable { var name: String; var café: Int }
        #expect(try Self.decode(Named.self, #"{"na\u006De":"x","cafe\u0301":1}"#) == Named(name: "x", café: 1))
        #expect(try Self.decode(Named.self, "{\"name\":\"y\",\"caf\u{E9}\":2}") == Named(name: "y", café: 2))
    }

    @Test("large objects and dictionaries decode, with the last duplicate winning")
    func largeObjects() throws {
        let members = (0..<500).map { #""k\#($0)":\#($0)"# }.joined(separator: ",")
        let dictionary = try Self.decode([String: Int].self, "{\(members),\"k7\":-7}")
        #expect(dictionary.count == 500)
        #expect(dictionary["k7"] == -7 && dictionary["k499"] == 499)
        struct Wide: Decodable, Equatable { var f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14: Int }
        let wide = try Self.decode(Wide.self, "{" + (0..<15).reversed().map { #""f\#($0)":\#($0)"# }.joined(separator: ",") + "}")
        #expect(wide.f0 == 0 && wide.f7 == 7 && wide.f14 == 14)
    }

    @Test("nested keyed and unkeyed containers and super decoders read the right values")
    func nesting() throws {
        struct Probe: Decodable {
            var inner: String, list: [Int], superValue: Int, namedSuper: String, missingSuperIsNull: Bool, path: [String]
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: AnyKey.self)
                let nested = try container.nestedContainer(keyedBy: AnyKey.self, forKey: AnyKey("object"))
                inner = try nested.decode(String.self, forKey: AnyKey("inner"))
                path = nested.codingPath.map(\.stringValue)
                var unkeyed = try container.nestedUnkeyedContainer(forKey: AnyKey("array"))
                list = []
                while !unkeyed.isAtEnd { list.append(try unkeyed.decode(Int.self)) }
                superValue = try container.superDecoder().singleValueContainer().decode(Int.self)
                namedSuper = try container.superDecoder(forKey: AnyKey("object")).container(keyedBy: AnyKey.self)
                    .decode(String.self, forKey: AnyKey("inner"))
                missingSuperIsNull = try container.superDecoder(forKey: AnyKey("absent")).singleValueContainer().decodeNil()
            }
        }
        let probe = try Self.decode(Probe.self, #"{"object":{"inner":"x"},"array":[3,4,5],"super":9}"#)
        #expect(probe.inner == "x" && probe.list == [3, 4, 5] && probe.superValue == 9 && probe.namedSuper == "x")
        #expect(probe.missingSuperIsNull)
        #expect(probe.path == ["object"])
    }

    @Test("unkeyed containers count, skip nulls only when asked, and fail at the end without advancing")
    func unkeyed() throws {
        struct Probe: Decodable {
            var count: Int?, values: [Int?] = [], nested: [String] = [], atEnd = false, endError = false, index = 0
            init(from decoder: any Decoder) throws {
                var container = try decoder.unkeyedContainer()
                count = container.count
                #expect(try container.decodeNil() == false)
                var failedAsString = false
                do { _ = try container.decode(String.self) } catch DecodingError.typeMismatch { failedAsString = true }
                #expect(failedAsString)
                values.append(try container.decode(Int.self))
                #expect(try container.decodeNil())
                values.append(nil)
                var inner = try container.nestedUnkeyedContainer()
                nested.append(try inner.decode(String.self))
                let object = try container.nestedContainer(keyedBy: AnyKey.self)
                nested.append(try object.decode(String.self, forKey: AnyKey("k")))
                nested.append(try container.superDecoder().singleValueContainer().decode(String.self))
                index = container.currentIndex
                atEnd = container.isAtEnd
                do { _ = try container.decode(Int.self) } catch DecodingError.valueNotFound { endError = true }
            }
        }
        let probe = try Self.decode(Probe.self, #"[1,null,["a"],{"k":"b"},"c"]"#)
        #expect(probe.count == 5 && probe.values == [1, nil] && probe.nested == ["a", "b", "c"])
        #expect(probe.index == 5 && probe.atEnd && probe.endError)
    }

    @Test("the coding path a decoder reports names keys and indices")
    func codingPaths() throws {
        struct Leaf: Decodable {
            var path: String
            init(from decoder: any Decoder) throws {
                path = decoder.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            }
        }
        struct Root: Decodable { var a: [String: [Leaf]] }
        let root = try Self.decode(Root.self, #"{"a":{"b":[{},{}]}}"#)
        #expect(root.a["b"]?.map(\.path) == [".a.b[0]", ".a.b[1]"])
    }

    @Test("a decoder kept after decoding still reads its value")
    func escapedDecoder() throws {
        final class Keeper: Decodable {
            let decoder: any Decoder
            init(from decoder: any Decoder) throws { self.decoder = decoder }
        }
        var data = Data(#"{"text":"kept \u00e9","n":[1,2]}"#.utf8)
        let keeper = try JSONCodec.shared.decode(Keeper.self, from: data)
        data.resetBytes(in: 0..<data.count)
        let container = try keeper.decoder.container(keyedBy: AnyKey.self)
        #expect(try container.decode(String.self, forKey: AnyKey("text")) == "kept é")
        #expect(try container.decode([Int].self, forKey: AnyKey("n")) == [1, 2])
    }

    private struct Inner: Decodable { var count: Int; var price: Double?; var tag: String? }
    private struct Outer: Decodable { var items: [Inner]; var byName: [String: Inner]?; var nested: [[Int8]]? }

    @Test(
        "errors name the field path and the problem",
        arguments: [
            (#"{"items":[{"count":1},{"count":1.5}]}"#, "items[1].count", "expected an integer"),
            (#"{"items":[{"count":"1"}]}"#, "items[0].count", "expected an integer"),
            (#"{"items":[{"count":null}]}"#, "items[0].count", "expected an integer, found null"),
            (#"{"items":[{}]}"#, "items[0].count", "is required"),
            (#"{"items":[{"count":1,"price":"x"}]}"#, "items[0].price", "expected a number"),
            (#"{"items":[{"count":1,"price":1e999}]}"#, "items[0].price", "expected a number within the range of Double"),
            (#"{"items":[],"byName":{"a b":{"count":true}}}"#, "byName.a b.count", "expected an integer"),
            (#"{"items":[],"byName":[]}"#, "byName", "expected an object"),
            (#"{"items":{}}"#, "items", "expected an array"),
            (#"{"items":null}"#, "items", "expected an array, found null"),
            (#"{"items":[],"nested":[[1],[2,300]]}"#, "nested[1][1]", "expected an integer from -128 to 127"),
            (#"{"items":[{"count":1,"tag":{}}]}"#, "items[0].tag", "expected a string"),
            (#"[]"#, "(message)", "expected an object"),
        ])
    func errorPaths(json: String, field: String, problem: String) throws {
        let violation = try Self.violation(json, as: Outer.self)
        #expect(violation.field == field)
        #expect(violation.problem == problem)
    }
}
