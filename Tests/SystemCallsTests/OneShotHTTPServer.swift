import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A server on 127.0.0.1 that takes one connection, reads one request, and answers with bytes
/// a test scripts — whole, in pieces, or not at all — for ``BlockingHTTPClient``'s tests.
/// Its thread gives up after 60 s of waiting for anything (long enough for a starved test to
/// connect), so a failed test never leaves it blocked for good.
final class OneShotHTTPServer: Sendable {
    /// What the server does once it has read the request.
    enum Behaviour: Sendable {
        /// Writes each piece in turn, pausing a little between pieces (so the client sees them
        /// in separate reads), then closes the connection.
        case answer([String])
        /// Writes nothing, and closes once the client has (after its timeout).
        case silent
    }

    /// The port it listens on.
    let port: Int
    /// The request as received (head and body), once read; shared with the serving thread.
    private let received = RequestSlot()

    /// Where the serving thread leaves the request.
    private final class RequestSlot: Sendable {
        let request = Mutex<String?>(nil)
    }

    /// Starts listening and serving one connection with `behaviour`.
    init(_ behaviour: Behaviour) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(listener, address, length) == 0 && listen(listener, 1) == 0 && getsockname(listener, address, &length) == 0
            }
        }
        guard bound else {
            close(listener)
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        Self.limitWaits(of: listener)
        Thread { [received] in
            defer { close(listener) }
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            defer { close(connection) }
            Self.limitWaits(of: connection)
            let request = Self.readRequest(connection)
            received.request.withLock { $0 = request }
            switch behaviour {
            case .answer(let pieces):
                for (index, piece) in pieces.enumerated() {
                    if index > 0 { usleep(20_000) }
                    guard Self.write(piece, to: connection) else { return }
                }
            case .silent:
                var byte: UInt8 = 0
                while recv(connection, &byte, 1, 0) > 0 {}  // until the client gives up and closes
            }
        }.start()
    }

    /// The request the client sent, waiting up to 60 s for it.
    func request() async throws -> String {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if let request = received.request.withLock({ $0 }) { return request }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw POSIXError(.ETIMEDOUT)
    }

    /// Reads the head and, when it declares a `content-length`, the body.
    private static func readRequest(_ connection: Int32) -> String {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let text = String(decoding: bytes, as: UTF8.self)
            if let end = text.range(of: "\r\n\r\n") {
                let head = text[..<end.lowerBound].lowercased()
                let length = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                if text.utf8.count - text.utf8.distance(from: text.startIndex, to: end.upperBound) >= length { return text }
            }
            let count = recv(connection, &buffer, buffer.count, 0)
            guard count > 0 else { return text }
            bytes += buffer[..<count]
        }
    }

    /// Writes all of `text`; false when the client has gone.
    private static func write(_ text: String, to connection: Int32) -> Bool {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    /// Bounds every blocking wait on `descriptor` (accept, recv) to 60 s.
    private static func limitWaits(of descriptor: Int32) {
        var limit = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }
}
