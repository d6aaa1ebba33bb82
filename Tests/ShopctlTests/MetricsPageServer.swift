import Foundation
import ServiceTestSupport
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A `/metrics` stand-in on 127.0.0.1 for `shopctl top`'s tests: answers its n-th request with
/// the n-th of a fixed list of pages (the last one again after that), so that two scrapes see
/// counters that moved by known amounts. One connection per request, closed after the answer.
/// Stops (and closes its socket) when released or on ``stop()``: it waits for requests as long
/// as its test holds it, however slowly a busy machine runs the test.
final class MetricsPageServer: Sendable {
    /// The port it listens on.
    let port: Int
    private let state: State

    /// What the serving thread shares with the server; the socket closes when both let go.
    private final class State: Sendable {
        let listener: Int32
        let pages: [String]
        let status: Int
        /// How many requests have been answered.
        let served = Atomic<Int>(0)
        let stopped = Atomic<Bool>(false)

        init(listener: Int32, pages: [String], status: Int) {
            self.listener = listener
            self.pages = pages
            self.status = status
        }

        deinit { close(listener) }
    }

    /// Starts serving `pages` with `status` (200 unless told otherwise).
    init(pages: [String], status: Int = 200) throws {
        precondition(!pages.isEmpty, "a page to serve")
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        port = try ListeningSocket.listenOnLoopback(listener, backlog: 16)
        let state = State(listener: listener, pages: pages, status: status)
        self.state = state
        Thread { Self.serve(state) }.start()
    }

    deinit { stop() }

    /// How many requests it has answered.
    var requestCount: Int { state.served.load(ordering: .relaxed) }

    /// Stops accepting (the thread's `accept` fails at once).
    func stop() {
        guard !state.stopped.exchange(true, ordering: .relaxed) else { return }
        shutdown(state.listener, Int32(SHUT_RDWR))
    }

    /// Accepts and answers until stopped.
    private static func serve(_ state: State) {
        while !state.stopped.load(ordering: .relaxed) {
            let connection = accept(state.listener, nil, nil)
            guard connection >= 0 else { return }
            limitWaits(of: connection)
            readHead(connection)
            let index = state.served.wrappingAdd(1, ordering: .relaxed).oldValue
            let body = Array(state.pages[min(index, state.pages.count - 1)].utf8)
            let head = "HTTP/1.1 \(state.status) Fixture\r\ncontent-type: text/plain; version=0.0.4; charset=utf-8\r\n"
                + "content-length: \(body.count)\r\nconnection: close\r\n\r\n"
            let bytes = Array(head.utf8) + body
            _ = bytes.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            close(connection)
        }
    }

    /// Reads until the end of a request's head (a GET has no body).
    private static func readHead(_ connection: Int32) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        while !received.ends(with: Array("\r\n\r\n".utf8)) {
            let count = recv(connection, &buffer, buffer.count, 0)
            guard count > 0 else { return }
            received += buffer[..<count]
        }
    }

    /// Bounds every blocking read of `descriptor` to 10 s (a client that connects and sends nothing).
    private static func limitWaits(of descriptor: Int32) {
        var limit = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }
}

extension Array where Element: Equatable {
    /// Whether the array's last elements are `suffix`.
    fileprivate func ends(with suffix: [Element]) -> Bool {
        count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
    }
}
