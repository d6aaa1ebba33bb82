import Foundation
@testable import JSON
import RPC
import ServiceTestSupport
import Testing

/// Hostile input: random bytes and mutated valid messages must never crash the decoder, and
/// every rejection must be `INVALID_ARGUMENT`/`MALFORMED_MESSAGE`.
@Suite("JSON decoder fuzzing")
struct JSONFuzzTests {
    /// Bytes that JSON is made of, plus troublemakers, so random input gets past the first byte.
    private static let alphabet = Array(#"{}[]:,"\ -+.0123456789eEtruefalsnul/bfnrtu"#.utf8) + [0x00, 0x1F, 0x7F, 0x80, 0xC3, 0xA9, 0xED, 0xF0, 0xFF]

    private static func seeds() throws -> [[UInt8]] {
        var random = SeededGenerator(seed: 0xF022)
        var seeds = try (0..<20).map { _ in Array(try JSONCodec.shared.encode(JSONSamples.product(&random))) }
        seeds += try (0..<20).map { _ in Array(try JSONCodec.shared.encode(JSONSamples.value(&random))) }
        seeds.append(Array(#"{"s":"\ud83d\ude00\u0041\n","n":[-0.5e-3,1E+2,0],"t":true,"f":false,"z":null}"#.utf8))
        return seeds
    }

    private static func mutate(_ input: [UInt8], _ random: inout SeededGenerator) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &random)
            let byte = alphabet.randomElement(using: &random) ?? 0
            switch Int.random(in: 0..<6, using: &random) {
            case 0 where !bytes.isEmpty: bytes[position] = byte
            case 1: bytes.insert(byte, at: position)
            case 2 where !bytes.isEmpty: bytes.remove(at: position)
            case 3: bytes.removeLast(bytes.count - position)
            case 4 where !bytes.isEmpty: bytes[position] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &random)
            default: bytes.insert(contentsOf: bytes[position...].prefix(8), at: position)
            }
        }
        return bytes
    }

    /// Decodes `bytes` as `type`; a failure must be the documented error.
    private static func check<Value: Decodable>(_ bytes: [UInt8], as type: Value.Type) -> Bool {
        do {
            _ = try JSONCodec.shared.decode(type, from: Data(bytes))
            return true
        } catch {
            #expect(error.code == .invalidArgument, "\(bytes)")
            #expect(error.reason == "MALFORMED_MESSAGE", "\(bytes)")
            return false
        }
    }

    @Test("20,000 random and mutated inputs never crash and fail only as MALFORMED_MESSAGE")
    func fuzz() throws {
        var random = SeededGenerator(seed: 0xF0221)
        let seeds = try Self.seeds()
        var accepted = 0
        for round in 0..<20_000 {
            let bytes: [UInt8]
            if round % 4 == 0 {
                bytes = (0..<Int.random(in: 0..<48, using: &random)).map { _ in Self.alphabet.randomElement(using: &random) ?? 0 }
            } else {
                bytes = Self.mutate(seeds.randomElement(using: &random) ?? [], &random)
            }
            if Self.check(bytes, as: JSONValue.self) { accepted += 1 }
            _ = Self.check(bytes, as: JSONSamples.Product.self)
            _ = Self.check(bytes, as: [String: [Int]].self)
        }
        // The mutations must leave enough valid documents to exercise the decoding paths too.
        #expect(accepted > 1000)
    }

    @Test("what our decoder accepts, Foundation's accepts with the same value (mutated inputs without duplicate keys)")
    func differential() throws {
        var random = SeededGenerator(seed: 0xD1FF)
        let seeds = try Self.seeds()
        var compared = 0
        for _ in 0..<3000 {
            let bytes = Self.mutate(seeds.randomElement(using: &random) ?? [], &random)
            guard let ours = try? JSONCodec.shared.decode(JSONValue.self, from: Data(bytes)) else { continue }
            // Foundation keeps the first of duplicate keys and we keep the last.
            guard let foundation = try? Foundation.JSONDecoder().decode(JSONValue.self, from: Data(bytes)) else {
                Issue.record("Foundation rejected what we accepted: \(String(decoding: bytes, as: UTF8.self))")
                continue
            }
            if Self.hasDuplicateKeys(bytes) { continue }
            #expect(ours == foundation, "\(String(decoding: bytes, as: UTF8.self))")
            compared += 1
        }
        #expect(compared > 300)
    }

    /// Whether any object in `bytes` (valid JSON) repeats a key.
    private static func hasDuplicateKeys(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            guard let document = try? JSONDocument(bytes: buffer) else { return true }
            return document.tokens.indices.contains { index in
                document.tokens[index].kind == .object
                    && document.memberNames(in: index).count != Int(document.tokens[index].count)
            }
        }
    }
}
