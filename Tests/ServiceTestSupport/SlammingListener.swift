import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A TCP listener on 127.0.0.1 that accepts every connection and closes it at once, counting
/// them: a server that is "there" but fails every call before any response header.
package final class SlammingListener: Sendable {
    private let descriptor: Int32
    /// The bound port.
    package let port: Int
    private let state = Mutex<(accepted: Int, stopped: Bool, finished: Bool)>((0, false, false))

    package init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw ListeningSocket.Failure(call: "socket", code: errno) }
        port = try ListeningSocket.listenOnLoopback(descriptor)
        self.descriptor = descriptor
        let thread = Thread { [self] in self.acceptLoop() }
        thread.start()
    }

    /// Connections accepted so far.
    package var accepted: Int { state.withLock { $0.accepted } }

    private func acceptLoop() {
        while !state.withLock({ $0.stopped }) {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 20) > 0 else { continue }
            let connection = accept(descriptor, nil, nil)
            guard connection >= 0 else { continue }
            state.withLock { $0.accepted += 1 }
            // A plain close: the client sees its connection established, then end-of-file.
            close(connection)
        }
        state.withLock { $0.finished = true }
    }

    /// Stops accepting and closes the listening socket.
    package func stop() async {
        state.withLock { $0.stopped = true }
        let deadline = ContinuousClock.now + .seconds(1)
        while !state.withLock({ $0.finished }) && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        close(descriptor)
    }
}
