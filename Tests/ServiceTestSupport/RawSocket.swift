import Foundation
import Glibc
import RPC
import Synchronization

/// A plain blocking TCP connection to a loopback port, for sending bytes no HTTP/2 library
/// would: bad prefaces, truncated frames, header floods. Receives time out, so a test never
/// hangs on a server that stays silent, and run on a thread of their own, so they never
/// block the (small) cooperative pool the servers' handlers need.
///
/// Invariant for @unchecked Sendable: one test uses a socket, one call at a time.
package final class RawSocket: @unchecked Sendable {
    private var fd: Int32

    /// Connects to `127.0.0.1:port`.
    package init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawSocketError(function: "socket", errno: errno) }
        let descriptor = fd
        let result = withLoopbackAddress(port: port) { connect(descriptor, $0, $1) }
        guard result == 0 else {
            let error = RawSocketError(function: "connect", errno: errno)
            Glibc.close(fd)
            throw error
        }
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }

    /// Sends all of `bytes`; returns false when the peer has already closed.
    @discardableResult
    package func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { buffer in
                Glibc.send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += sent
        }
        return true
    }

    /// Closes our sending side (the peer reads end-of-file) but keeps reading.
    package func finishSending() {
        shutdown(fd, Int32(SHUT_WR))
    }

    /// Closes the socket.
    package func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    /// Reads until the peer closes or `timeout` passes. Returns what arrived and whether the
    /// peer closed (end-of-file or reset) within the time.
    package func readUntilClosed(timeout: Duration) async -> (bytes: [UInt8], closed: Bool) {
        await onThread { self.blockingReadUntilClosed(timeout: timeout) }
    }

    private func blockingReadUntilClosed(timeout: Duration) -> (bytes: [UInt8], closed: Bool) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let deadline = ContinuousClock.now + timeout
        while true {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return (received, false) }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let millis = Int32(max(1, remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000))
            let ready = poll(&poller, 1, millis)
            if ready < 0 {
                if errno == EINTR { continue }
                return (received, false)
            }
            if ready == 0 { continue }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { return (received, true) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return (received, true)  // ECONNRESET: the peer closed hard
            }
            received.append(contentsOf: buffer[0..<count])
        }
    }
}

/// Runs blocking work on a new thread and waits for it without holding a cooperative thread.
package func onThread<Value: Sendable>(_ work: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: work()) }.start()
    }
}

/// A failed call on a ``RawSocket``.
package struct RawSocketError: Error, CustomStringConvertible {
    package let function: String
    package let errno: Int32
    package var description: String { "\(function): \(String(cString: strerror(errno)))" }
}

/// A loopback port with nothing listening on it: bound once to find a free port, then closed.
package func deadPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw RawSocketError(function: "socket", errno: errno) }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
            bind(fd, address, length) == 0 && getsockname(fd, address, &length) == 0
        }
    }
    guard bound else { throw RawSocketError(function: "bind", errno: errno) }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// A TCP listener that never accepts: connections complete in the kernel's backlog and
/// bytes sent to them are buffered, but nothing ever answers — a server that hangs.
package final class SilentListener: Sendable {
    private let fd: Int32
    /// The bound port.
    package let port: Int

    /// With `backlog` 0 the kernel queues one unaccepted connection: once that one is in,
    /// further connection attempts get no answer at all and stay half-open (SYN sent).
    package init(backlog: Int32 = 64) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawSocketError(function: "socket", errno: errno) }
        port = try ListeningSocket.listenOnLoopback(fd, backlog: backlog)
    }

    /// Closes the listening socket.
    package func close() { Glibc.close(fd) }
}

/// Builds HTTP/2 frames and HPACK blocks by hand (RFC 9113 §4.1, RFC 7541 §6.2.2).
package enum HTTP2Bytes {
    package static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    /// Frame types and flags used here.
    package static let data: UInt8 = 0, headers: UInt8 = 1, settings: UInt8 = 4, goAway: UInt8 = 7, continuation: UInt8 = 9
    package static let endStream: UInt8 = 0x1, endHeaders: UInt8 = 0x4

    /// One frame: 24-bit length, type, flags, 31-bit stream id, payload.
    package static func frame(type: UInt8, flags: UInt8 = 0, stream: UInt32 = 0, payload: [UInt8] = []) -> [UInt8] {
        let length = payload.count
        return [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, flags,
                UInt8(stream >> 24 & 0x7F), UInt8(stream >> 16 & 0xFF), UInt8(stream >> 8 & 0xFF), UInt8(stream & 0xFF)]
            + payload
    }

    /// An HPACK integer with a 7-bit prefix (the high bit, Huffman, stays 0).
    package static func integer(_ value: Int) -> [UInt8] {
        guard value >= 127 else { return [UInt8(value)] }
        var bytes: [UInt8] = [127]
        var rest = value - 127
        while rest >= 128 {
            bytes.append(UInt8(rest % 128 + 128))
            rest /= 128
        }
        bytes.append(UInt8(rest))
        return bytes
    }

    /// A literal header field without indexing, with a literal name.
    package static func literal(_ name: String, _ value: String) -> [UInt8] {
        [0x00] + integer(name.utf8.count) + Array(name.utf8) + integer(value.utf8.count) + Array(value.utf8)
    }

    /// A header block of gRPC request headers for `path`, plus `extra` fields.
    package static func requestBlock(path: String, contentType: String = "application/grpc+json", extra: [(String, String)] = []) -> [UInt8] {
        let fields = [(":method", "POST"), (":scheme", "http"), (":path", path), (":authority", "127.0.0.1"),
                      ("content-type", contentType), ("te", "trailers")] + extra
        return fields.flatMap { literal($0.0, $0.1) }
    }

    /// A client's opening bytes with one whole unary request on stream 1: the preface, SETTINGS
    /// with `settings` (identifier, value), HEADERS for `path` with `extra` fields, and DATA
    /// carrying `message` as one gRPC message, ending the stream. `settings` [(4, 0)] makes a
    /// client that opens no window for answers.
    package static func unaryRequest(
        path: String, message: String, extra: [(String, String)] = [], settings: [(UInt16, UInt32)] = []
    ) -> [UInt8] {
        let settingsPayload = settings.flatMap { identifier, value in
            [UInt8(identifier >> 8), UInt8(identifier & 0xFF), UInt8(value >> 24), UInt8(value >> 16 & 0xFF),
             UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
        }
        return preface + frame(type: Self.settings, payload: settingsPayload)
            + frame(type: headers, flags: endHeaders, stream: 1, payload: requestBlock(path: path, extra: extra))
            + frame(type: data, flags: endStream, stream: 1, payload: Array(MessageFraming.frame(Data(message.utf8))))
    }

    /// Splits received bytes into frames: (type, flags, stream id, payload length).
    package static func parseFrames(_ bytes: [UInt8]) -> [(type: UInt8, flags: UInt8, stream: UInt32, length: Int)] {
        var frames: [(UInt8, UInt8, UInt32, Int)] = []
        var offset = 0
        while offset + 9 <= bytes.count {
            let length = Int(bytes[offset]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
            let stream = UInt32(bytes[offset + 5] & 0x7F) << 24 | UInt32(bytes[offset + 6]) << 16
                | UInt32(bytes[offset + 7]) << 8 | UInt32(bytes[offset + 8])
            frames.append((bytes[offset + 3], bytes[offset + 4], stream, length))
            offset += 9 + length
        }
        return frames
    }
}
