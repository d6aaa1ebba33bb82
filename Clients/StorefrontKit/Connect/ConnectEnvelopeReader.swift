import Foundation
import RPC

/// Splits a Connect streaming response body into its envelopes as the bytes arrive, whatever
/// their boundaries (connectrpc.com/docs/protocol, "Streaming-Response"): one flag byte, a
/// four-byte big-endian length, the payload. Flag 0x02 marks the end-of-stream message.
///
/// Not thread-safe: owned by one call.
struct ConnectEnvelopeReader {
    /// One envelope of the body.
    enum Envelope: Equatable {
        /// A response message.
        case message(Data)
        /// The end-of-stream message (JSON: `{}`, or the error and trailing metadata).
        case endOfStream(Data)
    }

    /// The flag of the end-of-stream message.
    static let endOfStreamFlag: UInt8 = 0x02
    /// The flag of a compressed payload; we ask for no compression.
    static let compressedFlag: UInt8 = 0x01

    /// The largest payload accepted, in bytes (checked on the prefix, before buffering).
    let maxMessageSize: Int
    /// Bytes received but not yet part of a whole envelope.
    private var pending = Data()

    /// A reader refusing payloads over `maxMessageSize` bytes.
    init(maxMessageSize: Int) {
        self.maxMessageSize = maxMessageSize
    }

    /// Whether bytes of an unfinished envelope are waiting (a body that ends now is truncated).
    var hasPartialEnvelope: Bool { !pending.isEmpty }

    /// Feeds `bytes`; returns the envelopes they complete, in order.
    ///
    /// - Throws: `RESOURCE_EXHAUSTED`/`MESSAGE_TOO_LARGE` for a length over the limit,
    ///   `INTERNAL` for a compressed payload or an unknown flag.
    mutating func append(_ bytes: Data) throws(RPCError) -> [Envelope] {
        pending.append(bytes)
        var envelopes: [Envelope] = []
        var offset = pending.startIndex
        while pending.endIndex - offset >= MessageFraming.prefixSize {
            let flags = pending[offset]
            let length = (1...4).reduce(0) { $0 << 8 | Int(pending[offset + $1]) }
            try Self.check(flags: flags, length: length, limit: maxMessageSize)
            let start = offset + MessageFraming.prefixSize
            guard pending.endIndex - start >= length else { break }
            let payload = Data(pending[start..<(start + length)])
            envelopes.append(flags & Self.endOfStreamFlag != 0 ? .endOfStream(payload) : .message(payload))
            offset = start + length
        }
        pending = Data(pending[offset...])
        return envelopes
    }

    /// Refuses what this client cannot read.
    private static func check(flags: UInt8, length: Int, limit: Int) throws(RPCError) {
        guard flags & ~endOfStreamFlag == 0 else {
            let what = flags & compressedFlag != 0 ? "a compressed message, which was not asked for" : "unknown flags \(flags)"
            throw RPCError(code: .internal, reason: "MALFORMED_FRAME", message: "The server sent \(what).")
        }
        guard length <= limit else {
            throw RPCError(
                code: .resourceExhausted, reason: "MESSAGE_TOO_LARGE",
                message: "The server's message is \(length) bytes; the limit is \(limit).")
        }
    }
}
