internal import Foundation
internal import RPC

/// The message buffers of one call, shared by a loop thread and a task: received messages
/// waiting to be read, and framed bytes waiting to be sent, each with its waiting
/// continuation. Server streams and client calls both keep one behind a Mutex; every method
/// is a step taken under that lock, returning the continuations to resume after unlocking.
struct StreamBuffers {
    /// Bytes of unread messages above which the peer's window is no longer granted.
    static let inboundHighWater = 256 * 1024
    /// Unsent bytes above which a writer suspends…
    static let outboundHighWater = 256 * 1024
    /// …until they drop below this.
    static let outboundLowWater = 64 * 1024

    // Every continuation here is taken out of the buffers under their owner's lock before it
    // is resumed, so each is resumed exactly once. Debug builds — every test run — check it (a
    // second resume traps, none warns); release builds trust it, as they skip exclusivity
    // checks.
    #if DEBUG
    typealias Reader = CheckedContinuation<Data?, any Error>
    typealias Writer = CheckedContinuation<Void, any Error>
    #else
    // Unsafe in release: CheckedContinuation's layout is opaque, so every optional test and
    // store of one is a value-witness call after a metadata lookup, on every read and write of
    // every call; `Benchmarks/profile-get-product` and `Benchmarks/gateway-ab` (HISTORY
    // 2026-11-27, "Continuations") show the cost.
    typealias Reader = UnsafeContinuation<Data?, any Error>
    typealias Writer = UnsafeContinuation<Void, any Error>
    #endif

    /// Received messages not yet read.
    private var inbox = MessageQueue()
    private(set) var inboxBytes = 0
    private var inboundEnd: Result<Void, any Error>?
    private var reader: Reader?
    /// Messages waiting to be sent, framed as nghttp2 copies them out, so a message is never
    /// copied into a buffer of ours first; `outHeadSent` bytes of the first one's frame
    /// (prefix, then message) are already taken.
    private var outbox = MessageQueue()
    private var outHeadSent = 0
    private var unsentBytes = 0
    private var writer: Writer?
    /// Whether any message was ever queued for sending.
    private(set) var everWrote = false
    /// Set when the task's side is cancelled; reads and writes then throw.
    private(set) var cancellation: (any Error)?
    /// Whether the owning connection has been asked to flush and has not yet run dry.
    var flushScheduled = false
    /// Whether messages go out as they are, without the gRPC prefix: the body of an answer to
    /// a request that is not gRPC (``WebResponse`` over HTTP/2).
    var raw = false
    /// The bytes each queued message adds to the wire: its prefix, unless ``raw``.
    var framingOverhead: Int { raw ? 0 : MessageFraming.prefixSize }

    /// Received messages not yet read.
    var queuedMessages: Int { inbox.count }
    /// Unsent outbound bytes, prefixes included.
    var unsent: Int { unsentBytes }
    /// Whether the peer's withheld window may be granted now.
    var belowInboundMark: Bool { inboxBytes < Self.inboundHighWater }

    /// What a read found.
    enum Take {
        /// A message; `regrant` when the inbox just fell below the window mark.
        case message(Data, regrant: Bool)
        /// The end of the messages (or the error that ended them).
        case end(Result<Void, any Error>)
        /// Nothing yet: the continuation (if one was given) was stored.
        case wait
    }

    /// Takes the next message, or stores `continuation` (when given) to be resumed when one
    /// arrives. Callers try without a continuation first, so a ready message costs no
    /// suspension.
    mutating func take(_ continuation: Reader?) -> Take {
        if let cancellation { return .end(.failure(cancellation)) }
        if let message = inbox.popFirst() {
            let wasAbove = !belowInboundMark
            inboxBytes -= message.count
            return .message(message, regrant: wasAbove && belowInboundMark)
        }
        if let inboundEnd { return .end(inboundEnd) }
        if let continuation {
            assert(reader == nil, "two readers of one stream at once: the first would never be resumed")
            reader = continuation
        }
        return .wait
    }

    /// Adds a received message; returns a waiting reader with the message, which then skips
    /// the inbox.
    mutating func deliver(_ message: Data) -> (Reader, Data)? {
        if let waiting = reader {
            reader = nil
            return (waiting, message)
        }
        inbox.append(message)
        inboxBytes += message.count
        return nil
    }

    /// Ends the inbound messages (with an error, or cleanly); returns a waiting reader.
    mutating func endInbound(_ end: Result<Void, any Error>) -> Reader? {
        guard inboundEnd == nil else { return nil }
        inboundEnd = end
        defer { reader = nil }
        return reader
    }

    /// Queues one framed message; returns whether to schedule a flush and whether to wait.
    mutating func enqueue(_ message: Data) -> (schedule: Bool, wait: Bool) {
        unsentBytes += framingOverhead + message.count
        outbox.append(message)
        everWrote = true
        let schedule = !flushScheduled
        flushScheduled = true
        return (schedule, unsent > Self.outboundHighWater)
    }

    /// Whether a writer may go on (`true`), or stores `continuation` until bytes drain.
    mutating func proceedOrWait(_ continuation: Writer) -> Bool {
        guard unsent > Self.outboundLowWater else { return true }
        assert(writer == nil, "two writers of one stream at once: the first would never be resumed")
        writer = continuation
        return false
    }

    /// Copies unsent bytes into `buffer`, framing each message as it goes; returns the count
    /// and a writer to resume.
    mutating func drain(into buffer: UnsafeMutableRawBufferPointer) -> (count: Int, writer: Writer?) {
        var written = 0
        while written < buffer.count, let message = outbox.first {
            let prefixSize = framingOverhead
            if outHeadSent < prefixSize {
                let length = UInt32(truncatingIfNeeded: message.count)
                while outHeadSent < prefixSize && written < buffer.count {
                    // Flag 0 (not compressed), then the length, big-endian.
                    buffer[written] = outHeadSent == 0 ? 0 : UInt8(truncatingIfNeeded: length >> UInt32(8 * (prefixSize - 1 - outHeadSent)))
                    written += 1
                    outHeadSent += 1
                }
            }
            let start = outHeadSent - prefixSize
            let count = min(message.count - start, buffer.count - written)
            if count > 0 {
                message.withUnsafeBytes { bytes in
                    UnsafeMutableRawBufferPointer(rebasing: buffer[written..<(written + count)])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[start..<(start + count)]))
                }
                written += count
                outHeadSent += count
            }
            guard outHeadSent == prefixSize + message.count else { break }
            _ = outbox.popFirst()
            outHeadSent = 0
        }
        unsentBytes -= written
        guard unsentBytes <= Self.outboundLowWater, let waiting = writer else { return (written, nil) }
        writer = nil
        return (written, waiting)
    }

    /// Takes a writer waiting for bytes to drain, when the call ended well and nothing more
    /// will drain: it goes on (its next send finds the call over).
    mutating func takeWriter() -> Writer? {
        defer { writer = nil }
        return writer
    }

    /// Cancels the task's side; returns the continuations to fail.
    mutating func cancel(_ error: any Error) -> (Reader?, Writer?) {
        cancellation = cancellation ?? error
        defer { reader = nil; writer = nil }
        return (reader, writer)
    }
}

// The calling task's side of a stream, shared by server streams and client calls. `take` and
// `check` run one step under the owner's lock.
extension StreamBuffers {
    /// The next message: at once when one is ready (no suspension), else when one arrives.
    /// `regrant` runs when reading brought the inbox back under the window mark.
    static func nextMessage(take: (Reader?) -> Take, regrant: () -> Void) async throws -> Data? {
        switch take(nil) {
        case .message(let message, let grant):
            if grant { regrant() }
            return message
        case .end(let end):
            try end.get()
            return nil
        case .wait:
            break
        }
        return try await suspend { (continuation: Reader) in
            switch take(continuation) {
            case .message(let message, let grant):
                if grant { regrant() }
                continuation.resume(returning: message)
            case .end(let end):
                continuation.resume(with: end.map { nil })
            case .wait:
                break
            }
        }
    }

    /// Suspends a writer until unsent bytes drop below the low-water mark. `check` returns
    /// `true` to go on at once, `false` once it stored the continuation, or the stream's error.
    static func waitUntilDrained(check: (Writer) -> Result<Bool, any Error>) async throws {
        try await suspend { (continuation: Writer) in
            switch check(continuation) {
            case .success(true): continuation.resume()
            case .success(false): break
            case .failure(let error): continuation.resume(throwing: error)
            }
        }
    }
}

extension StreamBuffers {
    #if DEBUG
    /// Suspends with a checked continuation (``Reader``, ``Writer``) handed to `body`.
    fileprivate static func suspend<Value>(_ body: (CheckedContinuation<Value, any Error>) -> Void) async throws -> Value {
        try await withCheckedThrowingContinuation(body)
    }
    #else
    /// Suspends with an unsafe continuation (``Reader``, ``Writer``) handed to `body`.
    fileprivate static func suspend<Value>(_ body: (UnsafeContinuation<Value, any Error>) -> Void) async throws -> Value {
        try await withUnsafeThrowingContinuation(body)  // unsafe for the reason at ``Reader``: Benchmarks/profile-get-product, gateway-ab
    }
    #endif
}

/// A first-in-first-out list of messages that allocates nothing while it holds at most one
/// (a unary call's only message): the oldest is kept apart, the rest in an array read from
/// `restStart`, whose storage is kept and compacted rather than shifted on every pop.
struct MessageQueue {
    /// The oldest message; nil only when the queue is empty.
    private(set) var first: Data?
    private var rest: [Data] = []
    private var restStart = 0

    /// How many messages wait.
    var count: Int { first == nil ? 0 : 1 + rest.count - restStart }

    mutating func append(_ message: Data) {
        if first == nil {
            first = message
        } else {
            rest.append(message)
        }
    }

    /// Removes and returns the oldest message.
    mutating func popFirst() -> Data? {
        guard let message = first else { return nil }
        first = nil
        if restStart < rest.count {
            first = rest[restStart]
            rest[restStart] = Data()  // let go of it now, not when the array empties
            restStart += 1
            if restStart == rest.count {
                rest.removeAll(keepingCapacity: rest.count <= 1024)
                restStart = 0
            } else if restStart >= 1024 {
                rest.removeFirst(restStart)
                restStart = 0
            }
        }
        return message
    }
}
