internal import RPC
internal import Foundation
internal import Logging
internal import SystemCalls

/// A connection a server keeps (for graceful shutdown and its counts), whatever it speaks.
protocol ServedConnection: AnyObject, Sendable {
    var loop: EventLoop { get }
    /// `host:port` of the peer.
    var peer: String { get }
    /// Registers with the loop. Loop only.
    func start()
    /// Begins a graceful shutdown. Loop only.
    func beginDrain()
    /// Closes at once. Loop only.
    func close(reason: String?)
}

/// A new connection of a server with a ``WebHandler``, until its first bytes tell what it
/// speaks: the HTTP/2 connection preface (`PRI * HTTP/2.0…`, h2c with prior knowledge) makes
/// it a ``ServerConnection``, anything else an ``HTTP1Connection`` — no HTTP/1.1 request
/// begins with `PRI `. The bytes are peeked, not read, so the chosen connection reads them all.
final class ProtocolSniffer: EventHandler, ServedConnection, @unchecked Sendable {
    // Invariant for @unchecked Sendable: after init, touched only on `loop`.
    let fd: Int32
    let peer: String
    let loop: EventLoop
    private let server: HTTP2ServerCore
    private let web: any WebHandler
    private var timer: UInt64?
    private var done = false

    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    init(fd: Int32, peer: String, loop: EventLoop, server: HTTP2ServerCore, web: any WebHandler) {
        self.fd = fd
        self.peer = peer
        self.loop = loop
        self.server = server
        self.web = web
    }

    func start() {
        do {
            try loop.register(fd, readable: true, writable: false, handler: self)
        } catch {
            server.logger.warning("cannot watch connection from \(peer): \(error)")
            return close(reason: nil)
        }
        // A client that connects and sends nothing (or a preface cut short) holds a descriptor:
        // it gets as long as an HTTP/1.1 request head.
        timer = loop.scheduleTimer(after: server.configuration.http1.head) { [self] in
            timer = nil
            close(reason: "no request")
        }
    }

    func handleEvent(readable: Bool, writable: Bool, hangup: Bool) {
        guard !done else { return }
        var bytes = [UInt8](repeating: 0, count: Self.preface.count)
        let count: Int?
        do {
            count = try bytes.withUnsafeMutableBytes { try Socket.peek(fd, into: $0) }
        } catch {
            return close(reason: "read failed: \(error)")
        }
        guard let count else { return }
        if count == 0 { return close(reason: nil) }
        let isPreface = bytes[0..<count].elementsEqual(Self.preface[0..<count])
        if isPreface && count < Self.preface.count { return }  // the rest of the preface is on its way
        handOver(http2: isPreface)
    }

    private func handOver(http2: Bool) {
        done = true
        if let timer { loop.cancelTimer(timer) }
        loop.deregister(fd)
        server.connectionClosed(self)
        let connection: any ServedConnection =
            http2
            ? ServerConnection(fd: fd, peer: peer, loop: loop, server: server)
            : HTTP1Connection(fd: fd, peer: peer, loop: loop, server: server, web: web)
        server.connectionOpened(connection)
        connection.start()
    }

    func beginDrain() { close(reason: "shutdown") }

    func close(reason: String?) {
        guard !done else { return }
        done = true
        if let timer { loop.cancelTimer(timer) }
        loop.deregister(fd)
        System.close(fd)
        server.connectionClosed(self)
    }
}
