import Foundation
import RPC

/// The envelope of Connect streaming (one flag byte, a four-byte big-endian length, the
/// message) — the same layout as gRPC's length-prefixed messages and gRPC-Web's frames, which
/// differ only in what the response's final frame is flagged with.
enum ConnectEnvelope {
    /// The flag of Connect's end-of-stream message.
    static let endOfStreamFlag: UInt8 = 0x02
    /// The flag of gRPC-Web's trailer frame.
    static let trailersFlag: UInt8 = 0x80
    /// The flag of a compressed message (both protocols); we negotiate no compression.
    static let compressedFlag: UInt8 = 0x01

    /// The most messages one request body may hold. Every message of a body is handed to the
    /// call at once, each costing a list entry beside its bytes: a body of empty envelopes
    /// would otherwise make 800,000 of them out of 4 MiB before any interceptor had looked at
    /// the call. A client stream of real messages (ImportProducts' products) stays far below.
    static let maximumMessageCount = 100_000

    /// The messages of a request body that is a sequence of envelopes, each with flags 0; for
    /// a method whose request is one message (unary, server streaming), at most one.
    ///
    /// - Throws: `UNIMPLEMENTED`/`COMPRESSION_NOT_NEGOTIATED` for a compressed message (as the
    ///   gRPC path answers), `INVALID_ARGUMENT`/`MALFORMED_MESSAGE` for any other flag, or a
    ///   body that ends inside an envelope; `UNIMPLEMENTED`/`CARDINALITY_VIOLATION` for a
    ///   second message where one is expected (as the router's handlers answer);
    ///   `RESOURCE_EXHAUSTED`/`TOO_MANY_MESSAGES` past ``maximumMessageCount``.
    static func messages(in body: Data, for kind: MethodKind) throws(RPCError) -> [Data] {
        var messages: [Data] = []
        var offset = body.startIndex
        while offset < body.endIndex {
            if kind.isUnaryRequest, !messages.isEmpty { throw Router.extraRequestMessage }
            guard messages.count < maximumMessageCount else {
                throw RPCError(
                    code: .resourceExhausted, reason: "TOO_MANY_MESSAGES",
                    message: "A request may hold at most \(maximumMessageCount) messages.")
            }
            guard body.endIndex - offset >= MessageFraming.prefixSize else { throw truncated }
            let flags = body[offset]
            if flags & compressedFlag != 0 {
                throw RPCError(
                    code: .unimplemented, reason: "COMPRESSION_NOT_NEGOTIATED",
                    message: "A compressed message was received but no compression is in use; send it uncompressed.")
            }
            guard flags == 0 else {
                throw RPCError(
                    code: .invalidArgument, reason: "MALFORMED_MESSAGE", message: "Invalid message flags \(flags).")
            }
            var length = 0
            for index in 1...4 { length = length << 8 | Int(body[offset + index]) }
            let start = offset + MessageFraming.prefixSize
            // The length is at most 2^32 - 1, so the subtraction cannot overflow.
            guard length <= body.endIndex - start else { throw truncated }
            messages.append(Data(body[start..<(start + length)]))
            offset = start + length
        }
        return messages
    }

    /// One envelope of `message` with `flags`.
    static func frame(_ message: Data, flags: UInt8 = 0) -> Data {
        var frame = Data(capacity: MessageFraming.prefixSize + message.count)
        let length = UInt32(truncatingIfNeeded: message.count)
        frame.append(contentsOf: [
            flags, UInt8(truncatingIfNeeded: length >> 24), UInt8(truncatingIfNeeded: length >> 16),
            UInt8(truncatingIfNeeded: length >> 8), UInt8(truncatingIfNeeded: length),
        ])
        frame.append(message)
        return frame
    }

    private static let truncated = RPCError(
        code: .invalidArgument, reason: "MALFORMED_MESSAGE", message: "The request ended inside a message.")
}
