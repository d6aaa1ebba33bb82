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

    typealias Reader = CheckedContinuation<Data?, any Error>
    typealias Writer = CheckedContinuation<Void, any Error>

    private var inbox: [Data] = []
    private var inboxHead = 0
    private(set) var inboxBytes = 0
    private var inboundEnd: Result<Void, any Error>?
    private var reader: Reader?
    private var outbound: [UInt8] = []
    private var outboundOffset = 0
    private var writer: Writer?
    /// Whether any message was ever queued for sending.
    private(set) var everWrote = false
    /// Set when the task's side is cancelled; reads and writes then throw.
    private(set) var cancellation: (any Error)?
    /// Whether the owning connection has been asked to flush and has not yet run dry.
    var flushScheduled = false

    /// Received messages not yet read.
    var queuedMessages: Int { inbox.count - inboxHead }
    /// Unsent outbound bytes.
    var unsent: Int { outbound.count - outboundOffset }
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
        if inboxHead < inbox.count {
            let message = inbox[inboxHead]
            inboxHead += 1
            if inboxHead == inbox.count {
                inbox.removeAll(keepingCapacity: true)
                inboxHead = 0
            }
            let wasAbove = !belowInboundMark
            inboxBytes -= message.count
            return .message(message, regrant: wasAbove && belowInboundMark)
        }
        if let inboundEnd { return .end(inboundEnd) }
        if let continuation { reader = continuation }
        return .wait
    }

    /// Adds received messages; returns a waiting reader with the message it gets.
    mutating func deliver(_ messages: [Data]) -> (Reader, Data)? {
        var rest = messages[...]
        var handoff: (Reader, Data)?
        if let waiting = reader, let first = rest.first {
            reader = nil
            handoff = (waiting, first)
            rest = rest.dropFirst()
        }
        for message in rest {
            inbox.append(message)
            inboxBytes += message.count
        }
        return handoff
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
        MessageFraming.append(message, to: &outbound)
        everWrote = true
        let schedule = !flushScheduled
        flushScheduled = true
        return (schedule, unsent > Self.outboundHighWater)
    }

    /// Whether a writer may go on (`true`), or stores `continuation` until bytes drain.
    mutating func proceedOrWait(_ continuation: Writer) -> Bool {
        guard unsent > Self.outboundLowWater else { return true }
        writer = continuation
        return false
    }

    /// Copies unsent bytes into `buffer`; returns the count and a writer to resume.
    mutating func drain(into buffer: UnsafeMutableRawBufferPointer) -> (count: Int, writer: Writer?) {
        let count = min(unsent, buffer.count)
        if count > 0 {
            outbound.withUnsafeBytes { bytes in
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[outboundOffset..<(outboundOffset + count)]))
            }
            outboundOffset += count
            if outboundOffset == outbound.count {
                outbound.removeAll(keepingCapacity: outbound.count <= 1 << 20)
                outboundOffset = 0
            } else if outboundOffset > 1 << 20 {
                outbound.removeFirst(outboundOffset)
                outboundOffset = 0
            }
        }
        guard unsent <= Self.outboundLowWater, let waiting = writer else { return (count, nil) }
        writer = nil
        return (count, waiting)
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
        return try await withCheckedThrowingContinuation { continuation in
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
        try await withCheckedThrowingContinuation { (continuation: Writer) in
            switch check(continuation) {
            case .success(true): continuation.resume()
            case .success(false): break
            case .failure(let error): continuation.resume(throwing: error)
            }
        }
    }
}
