import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Serves a directory over plain HTTP on 127.0.0.1 with `python3 -m http.server`, run as a child
/// process: a stand-in for a provider's JWK Set URL.
///
/// Owned by one test, which must call `stop()`; not shared between tasks.
struct StaticFileServer {
    /// The port the server listens on.
    let port: Int
    private let process: Process

    /// The URL of `name` in the served directory.
    func url(of name: String) -> String { "http://127.0.0.1:\(port)/\(name)" }

    /// Starts serving `directory` on a free port and returns once the server answers.
    static func start(serving directory: String) async throws -> StaticFileServer {
        for _ in 0..<3 {
            let port = try freePort()
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", "-m", "http.server", "\(port)", "--bind", "127.0.0.1", "--directory", directory]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            let server = StaticFileServer(port: port, process: process)
            if await server.answers(within: .seconds(15)) { return server }
            // The port was taken between choosing and binding it, or python failed: try again.
            server.stop()
        }
        throw StaticFileServerError(description: "python3 -m http.server did not start on 127.0.0.1")
    }

    /// Kills the child process. Foundation reaps it in the background; nothing needs it gone
    /// sooner (every server has a port of its own), so no thread waits for the exit.
    func stop() {
        // SIGKILL, not `terminate()`: the child inherits the blocked signal mask of the
        // concurrency thread that spawned it, so a SIGTERM would stay pending forever.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// Polls the server's root until it answers or `timeout` passes (or the child exits).
    private func answers(within timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        guard let root = URL(string: url(of: "")) else { return false }
        while ContinuousClock.now < deadline, process.isRunning {
            if let (_, response) = try? await URLSession.shared.data(from: root),
                (response as? HTTPURLResponse)?.statusCode == 200
            {
                return true
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    /// A TCP port on 127.0.0.1 that was free a moment ago: the kernel picks it for a socket
    /// bound to port 0, which is then closed.
    private static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw StaticFileServerError(description: "socket() failed: errno \(errno)") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard bound else { throw StaticFileServerError(description: "cannot bind a free port: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// The test HTTP server could not be started.
struct StaticFileServerError: Error, CustomStringConvertible {
    /// What went wrong.
    let description: String
}
