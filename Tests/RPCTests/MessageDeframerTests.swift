import Foundation
import RPC
import ServiceTestSupport
import Testing

@Suite("MessageDeframer")
struct MessageDeframerTests {
    /// Feeds `bytes` to the deframer as one DATA frame.
    private static func feed(_ deframer: inout MessageDeframer, _ bytes: ArraySlice<UInt8>) throws -> [Data] {
        try bytes.withUnsafeBytes { buffer in try deframer.process(buffer) }
    }

    /// Feeds `stream` cut at `cuts` (chunk lengths; the rest goes in a last chunk).
    private static func deframe(_ stream: [UInt8], chunks: [Int], limit: Int = 1 << 22) throws -> [Data] {
        var deframer = MessageDeframer(maxMessageSize: limit)
        var messages: [Data] = []
        var offset = 0
        for length in chunks where offset < stream.count {
            let end = min(offset + length, stream.count)
            messages += try feed(&deframer, stream[offset..<end])
            offset = end
        }
        if offset < stream.count { messages += try feed(&deframer, stream[offset...]) }
        #expect(!deframer.hasPartialMessage)
        return messages
    }

    private static func framed(_ messages: [Data]) -> [UInt8] {
        var buffer: [UInt8] = []
        for message in messages { MessageFraming.append(message, to: &buffer) }
        return buffer
    }

    private static let twoMessages = [Data("{\"name\":\"first\"}".utf8), Data("{\"n\":2}".utf8)]

    @Test(
        "two messages come out whole whatever the DATA frame boundaries",
        arguments: [
            [Int](),  // everything at once
            [1, 1, 1, 1, 1, 1],  // prefix byte by byte
            [5],  // the prefix alone, then the rest
            [4],  // the prefix split across frames
            [6],  // the prefix and one body byte
            [21],  // exactly the first message
            [20, 2],  // first message minus one byte, then the last byte and the next prefix start
            [22, 4],  // second prefix split
            [26],  // second prefix complete, body pending
            [3, 10, 1, 8, 5],  // irregular
        ])
    func splitPatterns(chunks: [Int]) throws {
        let stream = Self.framed(Self.twoMessages)
        #expect(try Self.deframe(stream, chunks: chunks) == Self.twoMessages)
    }

    @Test("a seeded random stream decodes the same one byte at a time, in random chunks and all at once")
    func randomStreamIsSplitIndependent() throws {
        var random = SeededGenerator(seed: 0x5107_EF50)
        var messages = [Data(), Data([0x7B]), Data(repeating: 0x41, count: 70_000), Data(), Data()]
        for _ in 0..<40 {
            let size = [0, 1, 2, 4, 5, 6, 17, 100, 1_000, 16_384, 16_385, 20_000].randomElement(using: &random) ?? 0
            messages.append(Data((0..<size).map { _ in UInt8.random(in: 0...255, using: &random) }))
        }
        messages.append(Data((0..<70_000).map { _ in UInt8.random(in: 0...255, using: &random) }))
        messages.shuffle(using: &random)
        let stream = Self.framed(messages)

        let allAtOnce = try Self.deframe(stream, chunks: [])
        let byteByByte = try Self.deframe(stream, chunks: Array(repeating: 1, count: stream.count))
        var randomChunks: [Int] = []
        var covered = 0
        while covered < stream.count {
            let length = Int.random(in: 1...20_000, using: &random)
            randomChunks.append(length)
            covered += length
        }
        let randomlySplit = try Self.deframe(stream, chunks: randomChunks)

        #expect(allAtOnce.count == messages.count)
        #expect(allAtOnce == messages)
        #expect(byteByByte == messages)
        #expect(randomlySplit == messages)
    }

    @Test("zero-length messages are delivered as empty data, even several in a row")
    func zeroLengthMessages() throws {
        let messages = [Data(), Data(), Data("x".utf8), Data()]
        let stream = Self.framed(messages)
        #expect(try Self.deframe(stream, chunks: []) == messages)
        #expect(try Self.deframe(stream, chunks: Array(repeating: 1, count: stream.count)) == messages)
    }

    @Test("a zero-length message completes on its fifth prefix byte")
    func zeroLengthCompletesOnPrefix() throws {
        var deframer = MessageDeframer(maxMessageSize: 10)
        #expect(try Self.feed(&deframer, [0, 0, 0, 0]).isEmpty)
        #expect(deframer.hasPartialMessage)
        #expect(try Self.feed(&deframer, [0]) == [Data()])
        #expect(!deframer.hasPartialMessage)
    }

    @Test("a prefix over the limit fails with MESSAGE_TOO_LARGE before any body byte arrives")
    func oversizedPrefixFailsImmediately() throws {
        var deframer = MessageDeframer(maxMessageSize: 100)
        #expect(try Self.feed(&deframer, [0, 0, 0, 0]).isEmpty)
        let error = try #require(throws: RPCError.self) { try Self.feed(&deframer, [101]) }
        #expect(error.code == .resourceExhausted)
        #expect(error.reason == "MESSAGE_TOO_LARGE")
    }

    @Test("a prefix announcing 4 GiB - 1 is refused without buffering")
    func hugePrefixFails() throws {
        var deframer = MessageDeframer(maxMessageSize: 4 << 20)
        let error = try #require(throws: RPCError.self) { try Self.feed(&deframer, [0, 0xFF, 0xFF, 0xFF, 0xFF]) }
        #expect(error.code == .resourceExhausted)
        #expect(error.reason == "MESSAGE_TOO_LARGE")
    }

    @Test("a message exactly at the limit is accepted", arguments: [0, 1, 100, 70_000])
    func exactlyAtLimit(limit: Int) throws {
        let message = Data(repeating: 0x20, count: limit)
        let stream = MessageFraming.frame(message)
        #expect(try Self.deframe(stream, chunks: [], limit: limit) == [message])
        #expect(throws: RPCError.self) { try Self.deframe(stream, chunks: [], limit: limit - 1) }
    }

    @Test("a compressed flag is UNIMPLEMENTED (API.md §1) since no grpc-encoding is supported")
    func compressedFlag() throws {
        var deframer = MessageDeframer(maxMessageSize: 100)
        let error = try #require(throws: RPCError.self) { try Self.feed(&deframer, [1, 0, 0, 0, 2, 0x7B, 0x7D]) }
        #expect(error.code == .unimplemented && error.reason == "COMPRESSION_NOT_NEGOTIATED")
    }

    @Test("a flag other than 0 or 1 is INTERNAL", arguments: [UInt8(2), 3, 0x80, 0xFF])
    func invalidFlag(flag: UInt8) throws {
        var deframer = MessageDeframer(maxMessageSize: 100)
        let error = try #require(throws: RPCError.self) { try Self.feed(&deframer, [flag, 0, 0, 0, 0]) }
        #expect(error.code == .internal)
    }

    @Test("hasPartialMessage is true inside a message and false at every boundary")
    func partialMessageTracking() throws {
        let messages = [Data("ab".utf8), Data(), Data("c".utf8)]
        let stream = Self.framed(messages)
        // Boundaries fall after each whole frame: 7, 12 and 18 bytes.
        let boundaries: Set<Int> = [0, 7, 12, 18]
        var deframer = MessageDeframer(maxMessageSize: 10)
        #expect(!deframer.hasPartialMessage)
        var received: [Data] = []
        for index in stream.indices {
            received += try Self.feed(&deframer, stream[index...index])
            let fed = index + 1
            #expect(deframer.hasPartialMessage == !boundaries.contains(fed), "after \(fed) bytes")
        }
        #expect(received == messages)
    }

    @Test("an empty DATA frame changes nothing")
    func emptyInput() throws {
        var deframer = MessageDeframer(maxMessageSize: 10)
        #expect(try Self.feed(&deframer, []).isEmpty)
        #expect(!deframer.hasPartialMessage)
        #expect(try Self.feed(&deframer, [0, 0, 0]).isEmpty)
        #expect(try Self.feed(&deframer, []).isEmpty)
        #expect(deframer.hasPartialMessage)
        #expect(try Self.feed(&deframer, [0, 1, 0x31]) == [Data("1".utf8)])
    }

    @Test("the limit given at creation is kept")
    func limitIsExposed() {
        #expect(MessageDeframer(maxMessageSize: 1234).maxMessageSize == 1234)
    }
}
