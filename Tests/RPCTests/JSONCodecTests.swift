import Foundation
import RPC
import Testing
import JSON

@Suite("JSONCodec")
struct JSONCodecTests {
    private struct Item: Codable, Equatable {
        var productId: Int
        var count: Int
        var note: String?
    }

    private struct Order: Codable, Equatable {
        var id: String
        var paid: Bool
        var items: [Item]
    }

    private static func decodeOrder(_ json: String) throws(RPCError) -> Order {
        try JSONCodec.shared.decode(Order.self, from: Data(json.utf8))
    }

    /// The single field violation of a MALFORMED_MESSAGE error.
    private static func violation(_ error: RPCError) throws -> (field: String, description: String) {
        #expect(error.code == .invalidArgument)
        #expect(error.reason == "MALFORMED_MESSAGE")
        let violations = try #require(error.details?["fieldViolations"]?.arrayValue)
        #expect(violations.count == 1)
        let field = try #require(violations.first?["field"]?.stringValue)
        let description = try #require(violations.first?["description"]?.stringValue)
        #expect(error.message == "\(field): \(description)")
        return (field, description)
    }

    @Test("a valid message decodes")
    func decodes() throws {
        let order = try Self.decodeOrder(#"{"id":"o-1","paid":true,"items":[{"productId":7,"count":2}]}"#)
        #expect(order == Order(id: "o-1", paid: true, items: [Item(productId: 7, count: 2, note: nil)]))
    }

    @Test("unknown fields are ignored, at the top and nested")
    func unknownFieldsIgnored() throws {
        let order = try Self.decodeOrder(
            #"{"id":"o-1","extra":{"deep":[1,2,{"x":null}]},"paid":false,"items":[{"productId":1,"count":1,"colour":"red"}]}"#)
        #expect(order == Order(id: "o-1", paid: false, items: [Item(productId: 1, count: 1, note: nil)]))
    }

    @Test(
        "malformed JSON is INVALID_ARGUMENT with reason MALFORMED_MESSAGE",
        arguments: ["", "{", "not json", "{\"id\":}", "{\"id\":\"a\",}", "[1,2", "\u{0}", "{'id':'a'}"])
    func malformedJSON(json: String) throws {
        let error = try #require(throws: RPCError.self) { try Self.decodeOrder(json) }
        #expect(error.code == .invalidArgument)
        #expect(error.reason == "MALFORMED_MESSAGE")
        #expect(error.cause != nil)
    }

    @Test(
        "a wrong field type names the field, with its path",
        arguments: [
            (#"{"id":5,"paid":true,"items":[]}"#, "id", "expected a string"),
            (#"{"id":"a","paid":"yes","items":[]}"#, "paid", "expected a boolean"),
            (#"{"id":"a","paid":true,"items":{}}"#, "items", "expected an array"),
            (#"{"id":"a","paid":true,"items":[{"productId":1,"count":1},{"productId":2,"count":"three"}]}"#,
             "items[1].count", "expected an integer"),
            (#"{"id":"a","paid":true,"items":[7]}"#, "items[0]", "expected an object"),
            (#"{"id":"a","paid":true,"items":[{"productId":1,"count":1,"note":3}]}"#, "items[0].note", "expected a string"),
        ])
    func wrongType(json: String, field: String, description: String) throws {
        let error = try #require(throws: RPCError.self) { try Self.decodeOrder(json) }
        let violation = try Self.violation(error)
        #expect(violation.field == field)
        #expect(violation.description == description)
    }

    @Test(
        "a missing required field is reported as required",
        arguments: [
            (#"{"paid":true,"items":[]}"#, "id"),
            (#"{"id":"a","items":[]}"#, "paid"),
            (#"{"id":"a","paid":true,"items":[{"productId":1,"count":1},{"productId":2}]}"#, "items[1].count"),
        ])
    func missingField(json: String, field: String) throws {
        let error = try #require(throws: RPCError.self) { try Self.decodeOrder(json) }
        let violation = try Self.violation(error)
        #expect(violation.field == field)
        #expect(violation.description == "is required")
    }

    @Test(
        "a number that is not a valid integer is MALFORMED_MESSAGE",
        arguments: [
            #"{"id":"a","paid":true,"items":[{"productId":1.5,"count":1}]}"#,
            #"{"id":"a","paid":true,"items":[{"productId":100000000000000000000,"count":1}]}"#,
        ])
    func notAnInteger(json: String) throws {
        // Foundation on Linux reports these as corrupt data with no coding path, so the field
        // cannot be named; the code and reason are what the contract promises.
        let error = try #require(throws: RPCError.self) { try Self.decodeOrder(json) }
        #expect(error.code == .invalidArgument)
        #expect(error.reason == "MALFORMED_MESSAGE")
    }

    @Test("null for a required field names the field")
    func nullField() throws {
        let error = try #require(throws: RPCError.self) { try Self.decodeOrder(#"{"id":null,"paid":true,"items":[]}"#) }
        let violation = try Self.violation(error)
        #expect(violation.field == "id")
    }

    @Test("valid JSON of the wrong shape for the whole message is MALFORMED_MESSAGE", arguments: ["[]", "42", "\"text\"", "null"])
    func wrongTopLevel(json: String) throws {
        let error = try #require(throws: RPCError.self) { try Self.decodeOrder(json) }
        #expect(error.code == .invalidArgument)
        #expect(error.reason == "MALFORMED_MESSAGE")
    }

    @Test("encoding writes sorted keys and unescaped slashes")
    func encodingIsStable() throws {
        struct Link: Encodable {
            var url = "https://example.com/a"
            var alpha = 1
        }
        let data = try JSONCodec.shared.encode(Link())
        #expect(String(decoding: data, as: UTF8.self) == #"{"alpha":1,"url":"https://example.com/a"}"#)
    }

    @Test("encoding a non-finite number is a generic INTERNAL")
    func encodingFailure() throws {
        let error = try #require(throws: RPCError.self) { try JSONCodec.shared.encode(["x": Double.nan]) }
        #expect(error.code == .internal)
        #expect(error.message == "Internal error.")
        #expect(error.cause != nil)
    }

    @Test("a message survives encode then decode")
    func roundTrip() throws {
        let order = Order(id: "ü-✓", paid: true, items: [Item(productId: 1, count: 10, note: "gift \"wrap\"\n")])
        let data = try JSONCodec.shared.encode(order)
        #expect(try JSONCodec.shared.decode(Order.self, from: data) == order)
    }
}
