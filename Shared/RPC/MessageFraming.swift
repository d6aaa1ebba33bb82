public import Foundation

/// gRPC Length-Prefixed-Message framing: one flag byte (compressed or not), a four-byte
/// big-endian length, then the message.
/// https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md#requests
public enum MessageFraming {
    /// The size of the prefix before each message.
    public static let prefixSize = 5

    /// Appends the framed `message` to `buffer`, with `flags` in its flag byte (gRPC-Web's
    /// trailer frame and Connect's end-of-stream message share the layout under other flags).
    public static func append(_ message: Data, flags: UInt8 = 0, to buffer: inout [UInt8]) {
        let length = UInt32(truncatingIfNeeded: message.count)
        buffer.reserveCapacity(buffer.count + prefixSize + message.count)
        buffer.append(flags)
        buffer.append(UInt8(truncatingIfNeeded: length >> 24))
        buffer.append(UInt8(truncatingIfNeeded: length >> 16))
        buffer.append(UInt8(truncatingIfNeeded: length >> 8))
        buffer.append(UInt8(truncatingIfNeeded: length))
        buffer.append(contentsOf: message)
    }

    /// One framed message.
    public static func frame(_ message: Data, flags: UInt8 = 0) -> [UInt8] {
        var buffer: [UInt8] = []
        append(message, flags: flags, to: &buffer)
        return buffer
    }
}

/// Reassembles messages from DATA frames, whatever their boundaries.
///
/// The size limit is checked on the length prefix, before the body is buffered, so an
/// oversized message costs no memory. Not thread-safe: owned by one stream.
public struct MessageDeframer: Sendable {
    /// The largest message accepted, in bytes.
    public let maxMessageSize: Int
    /// The prefix bytes read so far, big-endian in the low bytes (no allocation per stream).
    private var prefix: UInt64 = 0
    private var prefixCount = 0
    private var body = Data()
    private var expected = -1

    /// Creates a deframer with a size limit.
    public init(maxMessageSize: Int) {
        self.maxMessageSize = maxMessageSize
    }

    /// Whether a message has started but not finished (a truncated stream if it ends now).
    public var hasPartialMessage: Bool { prefixCount > 0 || expected >= 0 }

    /// Feeds bytes and returns every message they complete.
    ///
    /// - Throws: `RESOURCE_EXHAUSTED`/`MESSAGE_TOO_LARGE` for a prefix over the limit;
    ///   `INTERNAL` for a compressed message (no `grpc-encoding` is supported) or a bad flag.
    public mutating func process(_ bytes: UnsafeRawBufferPointer) throws(RPCError) -> [Data] {
        var messages: [Data] = []
        try process(bytes) { messages.append($0) }
        return messages
    }

    /// Feeds bytes and hands each message they complete to `each`, in order, without
    /// collecting them first (the transports' path: usually one message, no list to allocate).
    /// Messages completed before a malformed prefix are handed over before the error is thrown.
    ///
    /// - Throws: as ``process(_:)``.
    public mutating func process(_ bytes: UnsafeRawBufferPointer, each: (Data) -> Void) throws(RPCError) {
        var offset = 0
        while offset < bytes.count {
            if expected < 0 {
                while prefixCount < MessageFraming.prefixSize && offset < bytes.count {
                    prefix = prefix << 8 | UInt64(bytes[offset])
                    prefixCount += 1
                    offset += 1
                }
                guard prefixCount == MessageFraming.prefixSize else { break }
                expected = try Self.length(flag: UInt8(truncatingIfNeeded: prefix >> 32), length: Int(prefix & 0xFFFF_FFFF), limit: maxMessageSize)
                prefix = 0
                prefixCount = 0
                if expected == 0 {
                    expected = -1
                    each(Data())
                    continue
                }
            }
            let missing = expected - body.count
            let take = min(missing, bytes.count - offset)
            let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + take)])
            offset += take
            if body.isEmpty && take == expected {
                expected = -1
                each(Data(slice))  // the common case: one message in one chunk
            } else {
                body.append(contentsOf: slice)
                if body.count < expected { break }
                let message = body
                body = Data()
                expected = -1
                each(message)
            }
        }
    }

    /// A request body that could not be split into messages, as a server tells its client: a
    /// bad message flag is the client's malformed message (`INVALID_ARGUMENT`), not a server
    /// failure; size and compression errors keep their own codes.
    public static func requestError(_ error: RPCError) -> RPCError {
        guard error.code == .internal else { return error }
        return RPCError(code: .invalidArgument, reason: "MALFORMED_MESSAGE", message: error.message)
    }

    /// What a request that ended inside a message is answered: the client's fault.
    public static let truncatedRequest = RPCError(
        code: .invalidArgument, reason: "MALFORMED_MESSAGE", message: "The request ended inside a message.")

    /// The length of a complete prefix, enforcing the flag and the limit.
    static func length(flag: UInt8, length: Int, limit: Int) throws(RPCError) -> Int {
        switch flag {
        case 0: break
        case 1:
            // API.md §1: a compressed message with no supported grpc-encoding is UNIMPLEMENTED.
            throw RPCError(
                code: .unimplemented, reason: "COMPRESSION_NOT_NEGOTIATED",
                message: "A compressed message was received but no grpc-encoding is in use; send it uncompressed.")
        default:
            throw RPCError(code: .internal, reason: "MALFORMED_FRAME", message: "Invalid message flag \(flag).")
        }
        guard length <= limit else {
            throw RPCError(
                code: .resourceExhausted, reason: "MESSAGE_TOO_LARGE",
                message: "The message is \(length) bytes; the limit is \(limit).")
        }
        return length
    }
}
