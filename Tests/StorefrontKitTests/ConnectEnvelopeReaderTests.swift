import Foundation
import RPC
@testable import StorefrontKit
import Testing

/// Splitting a Connect stream body into envelopes, whatever the chunks.
@Suite("StorefrontKit Connect envelopes")
struct ConnectEnvelopeReaderTests {
    /// Two messages and the end-of-stream message, framed.
    static let body: Data = {
        var bytes: [UInt8] = []
        MessageFraming.append(Data(#"{"a":1}"#.utf8), to: &bytes)
        MessageFraming.append(Data(), to: &bytes)
        MessageFraming.append(Data("{}".utf8), flags: 0x02, to: &bytes)
        return Data(bytes)
    }()

    static let expected: [ConnectEnvelopeReader.Envelope] = [
        .message(Data(#"{"a":1}"#.utf8)), .message(Data()), .endOfStream(Data("{}".utf8)),
    ]

    @Test("Split anywhere, the body gives the same envelopes", arguments: 1...12)
    func anyChunking(chunkSize: Int) throws {
        var reader = ConnectEnvelopeReader(maxMessageSize: 1024)
        var envelopes: [ConnectEnvelopeReader.Envelope] = []
        var offset = 0
        while offset < Self.body.count {
            let end = min(offset + chunkSize, Self.body.count)
            envelopes += try reader.append(Self.body.subdata(in: offset..<end))
            offset = end
        }
        #expect(envelopes == Self.expected)
        #expect(!reader.hasPartialEnvelope)
    }

    @Test("A half-received envelope is pending")
    func partial() throws {
        var reader = ConnectEnvelopeReader(maxMessageSize: 1024)
        #expect(try reader.append(Self.body.prefix(7)).isEmpty)
        #expect(reader.hasPartialEnvelope)
    }

    @Test("A length over the limit is refused from its prefix")
    func tooLarge() {
        var reader = ConnectEnvelopeReader(maxMessageSize: 4)
        #expect(throws: RPCError.self) { try reader.append(Data([0, 0, 0, 0, 5])) }
        var compressed = ConnectEnvelopeReader(maxMessageSize: 4)
        #expect(throws: RPCError.self) { try compressed.append(Data([1, 0, 0, 0, 1, 0])) }
    }
}
