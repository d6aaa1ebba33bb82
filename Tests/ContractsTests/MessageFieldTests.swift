import Contracts
import Foundation
import RPC
import Testing
import JSON

/// Keeps every message's `fields` honest: they must describe exactly what goes on the wire.
@Suite("Message fields")
struct MessageFieldTests {
    /// Every sampled message's fields by type name, as other messages' `fields` spell the type.
    static let registry = Dictionary(uniqueKeysWithValues: Samples.all.map { ($0.name, $0.fields) })

    private static func json(_ data: Data) throws -> JSONValue { try JSONDecoder().decode(JSONValue.self, from: data) }

    private static func members(_ value: JSONValue) throws -> [String: JSONValue] {
        guard case .object(let members) = value else { throw ShapeError("not an object") }
        return members
    }

    /// The ways `value` differs from `type` as `fields` spell it, recursing into messages and lists.
    static func violations(of value: JSONValue, as type: String, at path: String) -> [String] {
        switch (type, value) {
        case ("String", .string), ("Bool", .bool), ("Double", .number):
            return []
        case ("Int", .number(let number)):
            return number.rounded() == number ? [] : ["\(path): \(number) is not an integer"]
        case (_, .array(let elements)) where type.hasPrefix("[") && type.hasSuffix("]"):
            let elementType = String(type.dropFirst().dropLast())
            return elements.enumerated().flatMap { violations(of: $1, as: elementType, at: "\(path)[\($0)]") }
        case (_, .object(let members)):
            guard let fields = registry[type] else { return ["\(path): \(type) is not a sampled message"] }
            let names = Set(fields.map(\.name))
            var found = Set(members.keys).subtracting(names).sorted().map { "\(path).\($0) is not in \(type).fields" }
            found += fields.filter { !$0.optional && members[$0.name] == nil }.map { "\(path).\($0.name) is missing" }
            for field in fields {
                if let member = members[field.name] {
                    found += violations(of: member, as: field.type, at: "\(path).\(field.name)")
                }
            }
            return found
        default:
            return ["\(path): \(value) is not a \(type)"]
        }
    }

    @Test("a fully populated message encodes exactly its described fields, with their types", arguments: Samples.all)
    func fullMessageMatchesFields(sample: MessageSample) throws {
        let value = try Self.json(sample.full)
        #expect(Set(try Self.members(value).keys) == Set(sample.fields.map(\.name)))
        #expect(Self.violations(of: value, as: sample.name, at: sample.name) == [])
        #expect(Set(sample.fields.map(\.name)).count == sample.fields.count, "a field is described twice")
    }

    @Test("a message with its optionals left out still encodes every required field", arguments: Samples.all)
    func minimalMessageKeepsRequiredFields(sample: MessageSample) throws {
        let value = try Self.json(sample.minimal)
        let keys = Set(try Self.members(value).keys)
        #expect(Set(sample.fields.filter { !$0.optional }.map(\.name)).isSubset(of: keys))
        #expect(Self.violations(of: value, as: sample.name, at: sample.name) == [])
    }

    @Test("fields described as optional may be absent; required ones may not", arguments: Samples.all)
    func optionalFlagsMatchDecoding(sample: MessageSample) throws {
        let members = try Self.members(try Self.json(sample.full))
        let required = members.filter { name, _ in sample.fields.contains { $0.name == name && !$0.optional } }
        try sample.decode(JSONEncoder().encode(JSONValue.object(required)))
        for name in required.keys {
            var missingOne = required
            missingOne[name] = nil
            #expect(throws: DecodingError.self, "\(sample.name).\(name) is required") {
                try sample.decode(JSONEncoder().encode(JSONValue.object(missingOne)))
            }
        }
    }

    @Test("every message survives an encode and decode round trip", arguments: Samples.all)
    func roundTrip(sample: MessageSample) throws {
        #expect(try sample.roundTrips())
    }

    @Test("unknown fields are ignored", arguments: Samples.all)
    func unknownFieldsIgnored(sample: MessageSample) throws {
        var members = try Self.members(try Self.json(sample.full))
        members["someFutureField"] = .array([.string("x"), .object(["y": .null])])
        try sample.decode(JSONEncoder().encode(JSONValue.object(members)))
    }

    @Test("every type a field names is a primitive, a list or a sampled message")
    func fieldTypesAreKnown() {
        let primitives: Set = ["String", "Int", "Bool", "Double"]
        for (name, fields) in Self.registry {
            for field in fields {
                var type = field.type
                while type.hasPrefix("["), type.hasSuffix("]") { type = String(type.dropFirst().dropLast()) }
                #expect(primitives.contains(type) || Self.registry[type] != nil, "\(name).\(field.name): \(field.type)")
            }
        }
    }

    @Test("every method's request and response fields are those of a sampled message")
    func methodMessagesAreSampled() {
        let known = Set(Samples.all.map(\.fields))
        for info in ServiceTables.allMethods {
            #expect(known.contains(info.requestFields), "\(info.path) request")
            #expect(known.contains(info.responseFields), "\(info.path) response")
        }
    }

    @Test("the shape check catches an extra, a missing and a mistyped field")
    func shapeCheckCatchesMistakes() {
        let good: JSONValue = .object(["amount": .number(5), "currency": .string("USD")])
        #expect(Self.violations(of: good, as: "Money", at: "m") == [])
        let extra: JSONValue = .object(["amount": .number(5), "currency": .string("USD"), "cents": .number(5)])
        #expect(Self.violations(of: extra, as: "Money", at: "m") == ["m.cents is not in Money.fields"])
        #expect(Self.violations(of: .object(["amount": .number(5)]), as: "Money", at: "m") == ["m.currency is missing"])
        let fraction: JSONValue = .object(["amount": .number(0.5), "currency": .string("USD")])
        #expect(Self.violations(of: fraction, as: "Money", at: "m") == ["m.amount: 0.5 is not an integer"])
        #expect(Self.violations(of: .array([.string("7")]), as: "[Int]", at: "ids").count == 1)
    }

    @Test("Money's amount is an integer number of minor units")
    func moneyIsInteger() throws {
        let money = try JSONDecoder().decode(Money.self, from: Data(#"{"amount":1999,"currency":"USD"}"#.utf8))
        #expect(money == Money(amount: 1999, currency: "USD"))
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Money.self, from: Data(#"{"amount":19.99,"currency":"USD"}"#.utf8))
        }
        #expect(money.multiplied(by: 3) == Money(amount: 5997, currency: "USD"))
        #expect(Money.zero(currency: "EUR") == Money(amount: 0, currency: "EUR"))
    }
}

/// A JSON value of the wrong shape in a test.
struct ShapeError: Error, CustomStringConvertible {
    /// What was wrong.
    let description: String
    init(_ description: String) { self.description = description }
}
