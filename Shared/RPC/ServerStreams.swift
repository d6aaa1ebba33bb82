public import Foundation

/// The raw side of a server call that a transport provides: request message bytes in,
/// response message bytes out. Typed handlers are built on it by ``Router``.
public protocol ServerCallIO: Sendable {
    /// The next request message, or `nil` when the client has half-closed.
    ///
    /// Taking a message grants the client flow-control window for it (inbound backpressure).
    func nextMessage() async throws -> Data?
    /// Sends one response message; suspends while too many bytes wait to be sent.
    func write(_ message: Data) async throws
}

/// The request messages of a streaming call, decoded as they are read.
public struct RequestStream<Message: Decodable & Sendable>: AsyncSequence, Sendable {
    public typealias Element = Message
    let io: any ServerCallIO

    /// Wraps a call's raw side.
    public init(io: any ServerCallIO) { self.io = io }

    public func makeAsyncIterator() -> Iterator { Iterator(results: results.makeAsyncIterator()) }

    /// Reads and decodes messages one at a time; a message that does not decode ends the stream.
    public struct Iterator: AsyncIteratorProtocol {
        var results: Results.Iterator

        public mutating func next() async throws -> Message? {
            try await results.next()?.get()
        }
    }

    /// The messages with each one's decoding on its own: a message that does not decode is a
    /// `.failure` (`MALFORMED_MESSAGE`) in its place and the stream goes on — for handlers that
    /// answer for every message (ImportProducts' `failed`). The stream's own errors still throw.
    public var results: Results { Results(io: io) }

    /// ``results``.
    public struct Results: AsyncSequence, Sendable {
        public typealias Element = Result<Message, RPCError>
        let io: any ServerCallIO

        public func makeAsyncIterator() -> Iterator { Iterator(io: io) }

        /// Reads messages one at a time, decoding each.
        public struct Iterator: AsyncIteratorProtocol {
            let io: any ServerCallIO

            public mutating func next() async throws -> Result<Message, RPCError>? {
                guard let data = try await io.nextMessage() else { return nil }
                return Result { () throws(RPCError) in try JSONCodec.shared.decode(Message.self, from: data) }
            }
        }
    }
}

/// Writes the response messages of a streaming call.
public struct ResponseWriter<Message: Encodable & Sendable>: Sendable {
    let io: any ServerCallIO

    /// Wraps a call's raw side.
    public init(io: any ServerCallIO) { self.io = io }

    /// Encodes and sends one message, suspending while the client is slow to read.
    public func write(_ message: Message) async throws {
        try await io.write(try JSONCodec.shared.encode(message))
    }

    /// Sends one message already encoded with ``JSONCodec``: the same message written to many
    /// streams (a change fanned out to its watchers) is encoded once.
    public func write(encoded message: Data) async throws {
        try await io.write(message)
    }
}
