import Foundation
import JSON
import RPC
import ServiceTestSupport
import Testing

/// Our codec against Foundation's, which `JSONCodec` used before: same bytes out, same values
/// in, for message-like types and random JSON trees.
@Suite("JSON codec matches Foundation")
struct JSONCompatibilityTests {
    private typealias Product = JSONSamples.Product

    @Test("our encoder writes exactly the bytes Foundation's sorted-keys encoder writes", arguments: 0..<4)
    func encoderMatchesFoundation(seed: UInt64) throws {
        var random = SeededGenerator(seed: 0x5EED_0000 + seed)
        for _ in 0..<100 {
            let product = JSONSamples.product(&random)
            let ours = try JSONCodec.shared.encode(product)
            let foundation = try JSONSamples.foundationEncode(product)
            #expect(String(decoding: ours, as: UTF8.self) == String(decoding: foundation, as: UTF8.self))
        }
    }

    @Test("our decoder reads Foundation's output, compact and pretty-printed, into equal values", arguments: 0..<4)
    func decoderReadsFoundation(seed: UInt64) throws {
        var random = SeededGenerator(seed: 0xDEC0_0000 + seed)
        let pretty = Foundation.JSONEncoder()
        pretty.outputFormatting = [.prettyPrinted, .withoutEscapingSlashes]
        for _ in 0..<100 {
            let product = JSONSamples.product(&random)
            #expect(try JSONCodec.shared.decode(Product.self, from: JSONSamples.foundationEncode(product)) == product)
            #expect(try JSONCodec.shared.decode(Product.self, from: pretty.encode(product)) == product)
            #expect(try JSONCodec.shared.decode(Product.self, from: Foundation.JSONEncoder().encode(product)) == product)
        }
    }

    @Test("Foundation's decoder reads our output into equal values", arguments: 0..<4)
    func foundationReadsOurs(seed: UInt64) throws {
        var random = SeededGenerator(seed: 0xF0F0_0000 + seed)
        for _ in 0..<100 {
            let product = JSONSamples.product(&random)
            #expect(try Foundation.JSONDecoder().decode(Product.self, from: JSONCodec.shared.encode(product)) == product)
        }
    }

    @Test("random JSON trees round-trip through both codecs in every combination", arguments: 0..<8)
    func randomTrees(seed: UInt64) throws {
        var random = SeededGenerator(seed: 0x7EE5_0000 + seed)
        for _ in 0..<150 {
            let value = JSONSamples.value(&random)
            let ours = try JSONCodec.shared.encode(value)
            let foundation = try JSONSamples.foundationEncode(value)
            #expect(ours == foundation, "\(String(decoding: ours, as: UTF8.self))")
            #expect(try JSONCodec.shared.decode(JSONValue.self, from: ours) == value)
            #expect(try JSONCodec.shared.decode(JSONValue.self, from: foundation) == value)
            #expect(try Foundation.JSONDecoder().decode(JSONValue.self, from: ours) == value)
        }
    }

    @Test("doubles and floats are written as Foundation writes them", arguments: 0..<4)
    func numbers(seed: UInt64) throws {
        var random = SeededGenerator(seed: 0x0D0B_0000 + seed)
        for _ in 0..<500 {
            let double = JSONSamples.double(&random)
            let float = Float(bitPattern: UInt32(truncatingIfNeeded: random.next()) & 0x7EFF_FFFF)
            let values = ["d": [double], "f": [Double(float)]]
            #expect(try JSONCodec.shared.encode(values) == JSONSamples.foundationEncode(values))
            #expect(try JSONCodec.shared.encode([float]) == JSONSamples.foundationEncode([float]))
            #expect(try JSONCodec.shared.decode([Double].self, from: JSONCodec.shared.encode([double])) == [double])
            #expect(try JSONCodec.shared.decode([Float].self, from: JSONCodec.shared.encode([float])) == [float])
        }
    }

    @Test(
        "edge values match Foundation",
        arguments: [
            "[0,-0.0,1,-1,1.5,0.1,1e15,1e16,123456789.125,1e-7,5e-324,1.7976931348623157e308,9007199254740993]",
            "[-9223372036854775808,9223372036854775807,18446744073709551615,1E+2,1e-2,-0.000001]",
        ])
    func edgeNumbers(json: String) throws {
        let values = try Foundation.JSONDecoder().decode([Double].self, from: Data(json.utf8))
        #expect(try JSONCodec.shared.decode([Double].self, from: Data(json.utf8)) == values)
        #expect(try JSONCodec.shared.encode(values) == JSONSamples.foundationEncode(values))
    }

    @Test("integers at the edges of their types round-trip and match Foundation")
    func integerEdges() throws {
        struct Integers: Codable, Equatable {
            var a = Int.min, b = Int.max, c = Int8.min, d = Int16.max, e = Int32.min, f = Int64.max
            var g = UInt.max, h = UInt8.max, i = UInt16.max, j = UInt32.max, k = UInt64.max, l = 0
        }
        let data = try JSONCodec.shared.encode(Integers())
        #expect(data == (try JSONSamples.foundationEncode(Integers())))
        #expect(try JSONCodec.shared.decode(Integers.self, from: data) == Integers())
    }

    @Test("Data, URL and Decimal are written and read as Foundation does by default")
    func foundationTypes() throws {
        struct Mixed: Codable, Equatable {
            var data = Data([0, 1, 2, 250, 255])
            var url = URL(string: "https://example.com/a/b?c=d#e")
            var decimal = Decimal(string: "1234.5678")
            var date = Date(timeIntervalSinceReferenceDate: 12345.5)
        }
        let data = try JSONCodec.shared.encode(Mixed())
        #expect(data == (try JSONSamples.foundationEncode(Mixed())))
        #expect(try JSONCodec.shared.decode(Mixed.self, from: data) == Mixed())
    }
}
