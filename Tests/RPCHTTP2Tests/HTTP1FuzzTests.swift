import Foundation
@testable import RPCHTTP2
import ServiceTestSupport
import Testing

/// The HTTP/1.1 parsing we wrote ourselves — the head scanner and the chunked body reader,
/// beside libhttp_parser — fuzzed from a kept corpus: valid inputs split at random and fed in
/// pieces must read as fed whole, and random mutations of them must end in a verdict (complete,
/// more needed, or a 4xx) without a crash, a hang or a body past its bound. Seeded, so a
/// failure repeats; `HTTP1_FUZZ_ITERATIONS` runs longer.
@Suite("HTTP/1.1 parsing, fuzzed")
struct HTTP1FuzzTests {
    /// Valid chunked bodies and the bodies they carry.
    static let chunkedCorpus: [(wire: String, body: String)] = [
        ("0\r\n\r\n", ""),
        ("5\r\nhello\r\n0\r\n\r\n", "hello"),
        ("4;a=b;c\r\nwiki\r\nB\r\npedia in \r\n\r\n0\r\nx-trailer: yes\r\n\r\n", "wikipedia in \r\n"),
        ("1\r\nx\r\n1\r\ny\r\n000\r\n\r\n", "xy"),
        ("a ; ext=\"quoted\"\r\n0123456789\r\n0\r\nt1: a\r\nt2: b\t c\r\n\r\n", "0123456789"),
        ("F\r\n{\"id\":7,\"x\":12}\r\n0\r\n\r\n", "{\"id\":7,\"x\":12}"),
    ]

    /// Valid request heads.
    static let headCorpus = [
        "GET / HTTP/1.1\r\nhost: x\r\n\r\n",
        "\r\nPOST /shop.catalog.v1.CatalogService/GetProduct HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 8\r\n\r\n",
        "GET /verify-email?token=abc%20def HTTP/1.0\r\nuser-agent: fuzz\r\nx-empty:\r\n\r\n",
    ]

    static var iterations: Int { Int(ProcessInfo.processInfo.environment["HTTP1_FUZZ_ITERATIONS"] ?? "") ?? 3000 }

    /// Feeds `wire` to a chunked reader in the given pieces; the outcome and the body.
    static func readChunked(_ wire: [UInt8], pieces: [Int], maxBody: Int = 1 << 20) -> (HTTP1ChunkedBody.Outcome, Data, consumed: Int) {
        var reader = HTTP1ChunkedBody(maxBody: maxBody, maxTrailers: 16 * 1024)
        var offset = 0
        for length in pieces + [wire.count] {
            let end = min(wire.count, offset + length)
            let (consumed, outcome) = wire[offset..<end].withUnsafeBytes { reader.feed($0) }
            offset += consumed
            if outcome != .needMore { return (outcome, reader.body, offset) }
            #expect(consumed == end - (offset - consumed), "a reader that needs more took less than it was given")
            if offset >= wire.count { break }
        }
        return (.needMore, reader.body, offset)
    }

    @Test("valid chunked bodies read the same in any split, and stop right after their end")
    func chunkedSplits() {
        var random = SeededGenerator(seed: 26)
        for (wire, body) in Self.chunkedCorpus {
            let bytes = Array(wire.utf8) + Array("GET /next HTTP/1.1\r\n".utf8)
            for _ in 0..<Self.iterations / 10 {
                let pieces = (0..<Int.random(in: 0...6, using: &random)).map { _ in Int.random(in: 1...8, using: &random) }
                let (outcome, read, consumed) = Self.readChunked(bytes, pieces: pieces)
                #expect(outcome == .complete, "\(wire.debugDescription) in \(pieces)")
                #expect(String(decoding: read, as: UTF8.self) == body)
                #expect(consumed == wire.utf8.count, "the reader took bytes past the body's end")
            }
        }
    }

    @Test("mutated chunked bodies end in a verdict, never past the body's bound")
    func chunkedMutations() {
        var random = SeededGenerator(seed: 9112)
        let alphabet = Array("0123456789abcdefABCDEF;= \t\r\n\u{0}:xz-".utf8) + [0x7f, 0x80, 0xff]
        for _ in 0..<Self.iterations {
            var bytes = Array(Self.chunkedCorpus.randomElement(using: &random)!.wire.utf8)
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let index = Int.random(in: 0..<max(1, bytes.count), using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0 where !bytes.isEmpty: bytes[index] = alphabet.randomElement(using: &random)!
                case 1: bytes.insert(alphabet.randomElement(using: &random)!, at: min(index, bytes.count))
                default: if !bytes.isEmpty { bytes.remove(at: index) }
                }
            }
            let (outcome, body, consumed) = Self.readChunked(bytes, pieces: [Int.random(in: 1...16, using: &random)], maxBody: 64)
            #expect(body.count <= 64)
            #expect(consumed <= bytes.count)
            if case .failed(let status, _) = outcome { #expect([400, 413, 431].contains(status)) }
        }
    }

    @Test("valid heads scan the same in any split; mutated heads end in a verdict")
    func heads() {
        var random = SeededGenerator(seed: 7230)
        func scan(_ bytes: [UInt8], pieces: [Int]) -> HTTP1HeadScanner.Outcome {
            var progress = HTTP1HeadScanner.Progress()
            var end = 0
            for length in pieces + [bytes.count] {
                end = min(bytes.count, end + length)
                let outcome = bytes[0..<end].withUnsafeBytes {
                    HTTP1HeadScanner.scan($0, limit: 2048, lineLimit: 512, progress: &progress)
                }
                if outcome != .incomplete || end == bytes.count { return outcome }
            }
            return .incomplete
        }
        for head in Self.headCorpus {
            let bytes = Array(head.utf8)
            let whole = scan(bytes, pieces: [])
            #expect(whole == .complete(length: bytes.count), "\(head.debugDescription)")
            for _ in 0..<Self.iterations / 10 {
                let pieces = (0..<Int.random(in: 1...20, using: &random)).map { _ in Int.random(in: 1...9, using: &random) }
                #expect(scan(bytes, pieces: pieces) == whole, "\(head.debugDescription) in \(pieces)")
            }
        }
        let alphabet = Array(" \t\r\n\u{0}:aZ/".utf8) + [0x80]
        for _ in 0..<Self.iterations {
            var bytes = Array(Self.headCorpus.randomElement(using: &random)!.utf8)
            let index = Int.random(in: 0..<bytes.count, using: &random)
            bytes.insert(alphabet.randomElement(using: &random)!, at: index)
            switch scan(bytes, pieces: [Int.random(in: 1...12, using: &random)]) {
            case .complete(let length): #expect(length <= bytes.count)
            case .invalid(let status, _): #expect([400, 431].contains(status))
            case .incomplete: break
            }
        }
    }
}
