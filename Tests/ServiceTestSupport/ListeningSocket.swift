import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A TCP socket listening on 127.0.0.1, closed when released. Not thread-safe: one owner.
package final class ListeningSocket {
    /// Why the socket could not be made.
    package struct Failure: Error, CustomStringConvertible {
        /// The call that failed.
        package let call: String
        /// Its errno.
        package let code: Int32

        package var description: String { "\(call): \(String(cString: strerror(code)))" }
    }

    /// The port it listens on.
    package let port: Int
    private let descriptor: Int32

    /// Listens on `port` of 127.0.0.1 (0: a port the kernel picks).
    package init(port: Int = 0) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(call: "socket", code: errno) }
        self.port = try Self.listenOnLoopback(descriptor, port: port)
        self.descriptor = descriptor
    }

    /// Binds `descriptor` to `port` of 127.0.0.1 (0: one the kernel picks) and listens; returns
    /// the port. Closes the descriptor when it fails.
    package static func listenOnLoopback(_ descriptor: Int32, port: Int = 0, backlog: Int32 = 64) throws -> Int {
        let bound = withLoopbackAddress(port: port) { bind(descriptor, $0, $1) }
        guard bound == 0, listen(descriptor, backlog) == 0 else {
            let code = errno
            close(descriptor)
            throw Failure(call: "bind/listen 127.0.0.1:\(port)", code: code)
        }
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else {
            let code = errno
            close(descriptor)
            throw Failure(call: "getsockname", code: code)
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }
}
