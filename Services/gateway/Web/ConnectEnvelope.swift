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
    /// a method whose request is one message (unary, server streaming), at most one. Split by
    /// the gRPC path's own ``RPC/MessageDeframer``, so both answer a bad body alike.
    ///
    /// - Throws: `UNIMPLEMENTED`/`COMPRESSION_NOT_NEGOTIATED` for a compressed message,
    ///   `INVALID_ARGUMENT`/`MALFORMED_MESSAGE` for any other flag or a body that ends inside an
    ///   envelope (``RPC/MessageDeframer/requestError(_:)``); `UNIMPLEMENTED`/`CARDINALITY_VIOLATION`
    ///   for a second message where one is expected (as the router's handlers answer);
    ///   `RESOURCE_EXHAUSTED`/`TOO_MANY_MESSAGES` past ``maximumMessageCount``.
    static func messages(in body: Data, for kind: MethodKind) throws(RPCError) -> [Data] {
        // No size limit of its own: the transport has bounded the body, and a length past the
        // body's end is a truncated request (the client's mistake), not a message too large.
        var deframer = MessageDeframer(maxMessageSize: Int(UInt32.max))
        var messages: [Data] = []
        var surplus = 0  // messages past what the method takes, counted but not kept
        let limit = kind.isUnaryRequest ? 1 : maximumMessageCount
        do {
            try body.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
                try deframer.process(bytes) { message in
                    if messages.count < limit { messages.append(message) } else { surplus += 1 }
                }
            }
        } catch {
            // Data.withUnsafeBytes rethrows untyped; the deframer throws nothing but RPCError.
            throw MessageDeframer.requestError(RPCError(converting: error))
        }
        if deframer.hasPartialMessage { throw MessageDeframer.truncatedRequest }
        if surplus > 0 {
            if kind.isUnaryRequest { throw Router.extraRequestMessage }
            throw RPCError(
                code: .resourceExhausted, reason: "TOO_MANY_MESSAGES",
                message: "A request may hold at most \(maximumMessageCount) messages.")
        }
        return messages
    }

    /// One envelope of `message` with `flags`.
    static func frame(_ message: Data, flags: UInt8 = 0) -> Data {
        Data(MessageFraming.frame(message, flags: flags))
    }
}
