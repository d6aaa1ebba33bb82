import Foundation
import RPC
import Testing

@Suite("MessageFraming")
struct MessageFramingTests {
    @Test("a frame is a zero flag byte, a big-endian length and the message")
    func frameLayout() {
        let message = Data("{\"a\":1}".utf8)
        let framed = MessageFraming.frame(message)
        #expect(framed.count == MessageFraming.prefixSize + message.count)
        #expect(Array(framed.prefix(5)) == [0, 0, 0, 0, 7])
        #expect(Array(framed.dropFirst(5)) == Array(message))
    }

    @Test(
        "the length prefix is big-endian for sizes that use every byte",
        arguments: [
            (0, [UInt8]([0, 0, 0, 0])),
            (1, [0, 0, 0, 1]),
            (255, [0, 0, 0, 0xFF]),
            (256, [0, 0, 1, 0]),
            (70_000, [0, 0x01, 0x11, 0x70]),
            (0x01_02_03, [0, 0x01, 0x02, 0x03]),
        ])
    func bigEndianLength(size: Int, expectedLength: [UInt8]) {
        let framed = MessageFraming.frame(Data(repeating: 0x61, count: size))
        #expect(framed[0] == 0)
        #expect(Array(framed[1..<5]) == expectedLength)
        #expect(framed.count == 5 + size)
    }

    @Test("a prefix size of five bytes")
    func prefixSize() {
        #expect(MessageFraming.prefixSize == 5)
    }

    @Test("append adds after what the buffer already holds")
    func appendKeepsExistingBytes() {
        var buffer: [UInt8] = [0xAA, 0xBB]
        MessageFraming.append(Data([1, 2, 3]), to: &buffer)
        MessageFraming.append(Data(), to: &buffer)
        #expect(buffer == [0xAA, 0xBB, 0, 0, 0, 0, 3, 1, 2, 3, 0, 0, 0, 0, 0])
    }

    @Test("append of several messages equals their frames concatenated")
    func appendEqualsConcatenatedFrames() {
        let messages = [Data("x".utf8), Data(), Data(repeating: 7, count: 300)]
        var buffer: [UInt8] = []
        for message in messages { MessageFraming.append(message, to: &buffer) }
        #expect(buffer == messages.flatMap { MessageFraming.frame($0) })
    }
}
