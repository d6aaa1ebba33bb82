import Foundation
import RPC
@testable import RPCHTTP2
import Testing

/// A descriptor epoll refuses (here a regular file; in production ENOMEM or ENOSPC, epoll's
/// watch limit) leaves nothing behind: no handler in the loop, no connection on the server's
/// list, which graceful shutdown waits on.
@Suite("Registration failures")
struct RegistrationFailureTests {
    /// A descriptor of a regular file, which epoll refuses with EPERM.
    static func fileDescriptor() throws -> Int32 {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("epoll-refuses-\(UUID().uuidString)").path
        try #require(FileManager.default.createFile(atPath: path, contents: Data()))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fd = open(path, O_RDONLY)
        try #require(fd >= 0)
        return fd
    }

    /// A handler that is never called.
    final class Inert: EventHandler {
        func handleEvent(readable: Bool, writable: Bool, hangup: Bool) {}
    }

    @Test("a refused registration throws and keeps no handler")
    func loopKeepsNoHandler() async throws {
        let loop = try EventLoop(name: "register-test")
        let fd = try Self.fileDescriptor()
        let (threw, handlers) = await onLoop(loop) { () -> (Bool, Int) in
            let threw = (try? loop.register(fd, readable: true, writable: false, handler: Inert())) == nil
            return (threw, loop.registeredHandlerCount)
        }
        close(fd)
        #expect(threw)
        #expect(handlers == 0)
        await loop.shutdown()
    }

    @Test("a server connection whose socket cannot be watched is closed and leaves the server's list")
    func connectionLeavesServer() async throws {
        let loop = try EventLoop(name: "register-test")
        let core = HTTP2ServerCore(
            configuration: ServerConfiguration(host: "127.0.0.1", port: 0), router: Router(), logger: quietLogger)
        let fd = try Self.fileDescriptor()
        let listed = await onLoop(loop) { () -> Int in
            let connection = ServerConnection(fd: fd, peer: "test", loop: loop, server: core)
            core.connectionOpened(connection)
            connection.start()
            return core.openConnections.count
        }
        #expect(listed == 0)
        await loop.shutdown()
    }
}
