#if canImport(Glibc)
internal import Glibc
#endif

/// Why a ``BlockingTCPConnection`` operation failed.
package enum BlockingTCPError: Error, CustomStringConvertible {
    /// The host name did not resolve to any address.
    case cannotResolve(host: String, cause: SystemError?)
    /// The operation (`connect`, `read` or `write`) did not finish before its deadline.
    case timedOut(operation: String)
    /// The peer closed the connection while a write was pending.
    case closedByPeer
    /// A system call failed, e.g. `connect` with `ECONNREFUSED`.
    case system(SystemError)

    /// A sentence for logs and error messages.
    package var description: String {
        switch self {
        case .cannotResolve(let host, let cause?): "cannot resolve \(host): \(cause)"
        case .cannotResolve(let host, nil): "cannot resolve \(host)"
        case .timedOut(let operation): "\(operation) timed out"
        case .closedByPeer: "the peer closed the connection"
        case .system(let error): "\(error)"
        }
    }
}

/// A TCP client connection for code that runs on a thread of its own and may block: every
/// operation waits (with `poll`) at most until a deadline, so a silent peer cannot hang the
/// caller. Used by the SMTP client (Mail) and ``BlockingHTTPClient``; the RPC client uses the
/// event loop instead.
///
/// Not thread-safe: one thread uses a connection at a time. The socket closes on ``close()``
/// or when the connection is released.
package final class BlockingTCPConnection {
    private var fd: Int32
    /// How long a single ``read(atMost:)`` or ``write(_:)`` may take.
    package let timeout: Duration

    /// Resolves `host` (which may block on DNS), then connects to its addresses in turn until
    /// one accepts; the whole attempt is bounded by `timeout`, which also bounds each later
    /// read and write.
    package init(host: String, port: Int, timeout: Duration) throws(BlockingTCPError) {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        let addresses: [ResolvedAddress]
        do throws(SystemError) {
            addresses = try Socket.resolve(host: host, port: port, passive: false)
        } catch {
            throw .cannotResolve(host: host, cause: error)
        }
        guard !addresses.isEmpty else { throw .cannotResolve(host: host, cause: nil) }
        var lastError = BlockingTCPError.cannotResolve(host: host, cause: nil)
        for address in addresses {
            do throws(BlockingTCPError) {
                fd = try Self.connect(to: address, before: deadline)
                self.timeout = timeout
                return
            } catch {
                lastError = error
                if case .timedOut = error { break }  // no time is left for the next address
            }
        }
        throw lastError
    }

    deinit {
        close()
    }

    /// Reads whatever arrives first, up to `maximum` bytes, waiting at most ``timeout``.
    /// An empty result means the peer closed the connection.
    package func read(atMost maximum: Int = 4096) throws(BlockingTCPError) -> [UInt8] {
        try read(atMost: maximum, before: ContinuousClock.now.advanced(by: timeout))
    }

    /// Reads whatever arrives first, up to `maximum` bytes, waiting until `deadline` at most
    /// (for an exchange of many reads bounded as a whole). An empty result means the peer
    /// closed the connection.
    package func read(atMost maximum: Int = 4096, before deadline: ContinuousClock.Instant) throws(BlockingTCPError) -> [UInt8] {
        precondition(fd >= 0, "read on a closed connection")
        var bytes = [UInt8](repeating: 0, count: maximum)
        while true {
            try Self.wait(for: fd, events: Int16(POLLIN), operation: "read", before: deadline)
            let count: Int?
            do throws(SystemError) {
                // Array's closure-taking methods rethrow untyped errors; a Result keeps the type.
                count = try bytes.withUnsafeMutableBytes { buffer in
                    Result { () throws(SystemError) in try Socket.read(fd, into: buffer) }
                }.get()
            } catch {
                throw .system(error)
            }
            if let count {
                bytes.removeSubrange(count...)
                return bytes
            }
        }
    }

    /// Writes all of `bytes`; the whole write must finish within ``timeout``.
    package func write(_ bytes: [UInt8]) throws(BlockingTCPError) {
        try write(bytes, before: ContinuousClock.now.advanced(by: timeout))
    }

    /// Writes all of `bytes`; the whole write must finish by `deadline`.
    package func write(_ bytes: [UInt8], before deadline: ContinuousClock.Instant) throws(BlockingTCPError) {
        precondition(fd >= 0, "write on a closed connection")
        var offset = 0
        while offset < bytes.count {
            try Self.wait(for: fd, events: Int16(POLLOUT), operation: "write", before: deadline)
            let written: Int?
            do throws(SystemError) {
                written = try bytes.withUnsafeBytes { buffer in
                    let rest = UnsafeRawBufferPointer(rebasing: buffer[offset...])
                    return Result { () throws(SystemError) in try Socket.write(fd, from: rest) }
                }.get()
            } catch where error.errno == EPIPE || error.errno == ECONNRESET {
                throw .closedByPeer
            } catch {
                throw .system(error)
            }
            offset += written ?? 0
        }
    }

    /// Closes the socket; later calls do nothing.
    package func close() {
        guard fd >= 0 else { return }
        System.close(fd)
        fd = -1
    }

    /// One non-blocking connect attempt, finished (or abandoned) by `deadline`.
    private static func connect(
        to address: ResolvedAddress, before deadline: ContinuousClock.Instant
    ) throws(BlockingTCPError) -> Int32 {
        let fd: Int32
        do throws(SystemError) {
            fd = try Socket.startConnect(to: address)
        } catch {
            throw .system(error)
        }
        do throws(BlockingTCPError) {
            // A non-blocking connect reports completion, success or not, as writability.
            try wait(for: fd, events: Int16(POLLOUT), operation: "connect", before: deadline)
            if let error = Socket.pendingError(fd) { throw BlockingTCPError.system(error) }
            return fd
        } catch {
            System.close(fd)
            throw error
        }
    }

    /// Polls `fd` until one of `events` (or an error or hang-up) is reported, throwing
    /// ``BlockingTCPError/timedOut(operation:)`` once `deadline` passes.
    private static func wait(
        for fd: Int32, events: Int16, operation: String, before deadline: ContinuousClock.Instant
    ) throws(BlockingTCPError) {
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { throw .timedOut(operation: operation) }
            var request = pollfd(fd: fd, events: events, revents: 0)
            let ready: Int32
            do throws(SystemError) {
                ready = try System.call("poll") { poll(&request, 1, milliseconds(remaining)) }
            } catch {
                throw .system(error)
            }
            if ready > 0 { return }
        }
    }

    /// `duration` in whole milliseconds for `poll`, rounded up so a wait never ends early.
    private static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        let total = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: total)
    }
}
