internal import SystemCalls

/// The byte pump between one connected socket and its nghttp2 session, shared by server and
/// client connections. Loop only.
final class HTTP2Socket {
    /// What a round of reading found.
    enum ReadOutcome {
        /// Bytes were processed (or none were waiting).
        case open
        /// The peer closed, the socket failed, or the peer broke the protocol.
        case closed(reason: String?)
    }

    let fd: Int32
    /// Held strongly, as the connection that owns the socket holds it.
    let loop: EventLoop
    private var output = ConnectionOutput()
    private var watchingWritable = false
    /// When bytes last arrived, in monotonic nanoseconds.
    private(set) var lastActivity = System.monotonicNanoseconds()
    /// Since when (monotonic ns) output has been waiting for the peer to read with none of it
    /// taken; nil while the socket keeps up. A partial write starts the count again.
    private(set) var outputStalledSince: UInt64?

    init(fd: Int32, loop: EventLoop) {
        self.fd = fd
        self.loop = loop
    }

    /// Reads what is waiting (up to a megabyte, for fairness) into `session`. A read that
    /// does not fill the buffer took everything there was: the loop watches level-triggered, so
    /// it reports the socket again when more arrives, and no read is spent learning `EAGAIN`.
    func readAvailable(into session: HTTP2Session) -> ReadOutcome {
        var budget = 1 << 20
        while budget > 0 {
            let count: Int?
            do {
                count = try loop.readBuffer.withUnsafeMutableBytes { try Socket.read(fd, into: $0) }
            } catch {
                return .closed(reason: "read failed: \(error)")
            }
            guard let count else { return .open }
            if count == 0 { return .closed(reason: nil) }
            lastActivity = System.monotonicNanoseconds()
            budget -= count
            do {
                try loop.readBuffer.withUnsafeBytes { try session.receive(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            } catch {
                _ = flush(session)  // let our GOAWAY out
                return .closed(reason: "protocol error: \(error)")
            }
            if count < loop.readBuffer.count { return .open }
        }
        return .open
    }

    /// Whether a flush is already queued for the end of this iteration.
    private var flushQueued = false

    /// Has `owner` flush its output at the end of this loop iteration, once however often it
    /// is asked in the iteration: the output of every call handled in it leaves in one write.
    /// The owner rather than a closure, so asking again allocates nothing.
    func flushSoon(_ owner: some SocketOwner) {
        guard !flushQueued else { return }
        flushQueued = true
        loop.atEndOfIteration { [self, owner] in
            flushQueued = false
            owner.flushOutput()
        }
    }

    /// Writes everything `session` has queued, as far as the socket takes it, watching for
    /// writability while bytes remain. Returns an error text when the socket failed.
    func flush(_ session: HTTP2Session) -> String? {
        var progressed = false  // some bytes went out in this flush
        do {
            while true {
                if !output.isEmpty {
                    let waiting = output.count
                    let wroteAll = try output.write(to: fd)
                    progressed = progressed || output.count < waiting
                    guard wroteAll else {
                        // Only a blocked write reads the clock: the stall starts now, or
                        // starts again if the peer took some of the bytes.
                        if outputStalledSince == nil || progressed {
                            outputStalledSince = System.monotonicNanoseconds()
                        }
                        watchWritable(true)
                        return nil
                    }
                }
                while output.count < 64 * 1024, let bytes = try session.nextOutput() {
                    output.append(bytes)
                }
                if output.isEmpty { break }
            }
        } catch {
            return "write failed: \(error)"
        }
        outputStalledSince = nil
        watchWritable(false)
        return nil
    }

    private func watchWritable(_ writable: Bool) {
        guard writable != watchingWritable else { return }
        watchingWritable = writable
        loop.modify(fd, readable: true, writable: writable)
    }

    /// Switches a connecting socket (watched for writability only) to normal watching.
    func connected() {
        watchingWritable = false
        loop.modify(fd, readable: true, writable: false)
    }

    /// Stops watching and closes the descriptor.
    func close() {
        loop.deregister(fd)
        System.close(fd)
    }
}

/// A connection that owns an ``HTTP2Socket`` and writes its session's output through it.
protocol SocketOwner: AnyObject {
    /// Writes what its session has queued. Loop only.
    func flushOutput()
}

/// Bytes nghttp2 produced that the socket has not taken yet.
struct ConnectionOutput {
    private var buffer: [UInt8] = []
    private var offset = 0

    var isEmpty: Bool { offset == buffer.count }
    var count: Int { buffer.count - offset }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        if offset == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            offset = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Writes as much as the socket takes; returns whether everything went out.
    mutating func write(to fd: Int32) throws(SystemError) -> Bool {
        while offset < buffer.count {
            let result = buffer.withUnsafeBytes { bytes in
                Result { () throws(SystemError) in try Socket.write(fd, from: UnsafeRawBufferPointer(rebasing: bytes[offset...])) }
            }
            guard let written = try result.get() else { return false }
            offset += written
        }
        return true
    }
}
