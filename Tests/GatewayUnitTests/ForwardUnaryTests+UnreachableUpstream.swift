import Foundation
@testable import gateway
import Glibc
import RPC
import RPCHTTP2
import Synchronization
import Testing

/// A TCP listener that accepts connections and closes them at once, counting them: an
/// upstream that cannot be reached though its port is open.
private final class SlammingUpstream: Sendable {
    private let fd: Int32
    let port: Int
    private let state = Mutex<(accepted: Int, stopped: Bool, finished: Bool)>((0, false, false))

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SocketFailure(call: "socket") }
        guard let port = Self.bindAndListen(fd) else {
            Glibc.close(fd)
            throw SocketFailure(call: "bind")
        }
        self.fd = fd
        self.port = port
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Binds `fd` to a free loopback port and listens; the port, or nil on failure.
    private static func bindAndListen(_ fd: Int32) -> Int? {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(fd, address, length) == 0 && getsockname(fd, address, &length) == 0 && listen(fd, 64) == 0
            }
        }
        return bound ? Int(UInt16(bigEndian: address.sin_port)) : nil
    }

    var accepted: Int { state.withLock { $0.accepted } }

    private func acceptLoop() {
        while !state.withLock({ $0.stopped }) {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 20) > 0 else { continue }
            let connection = accept(fd, nil, nil)
            guard connection >= 0 else { continue }
            state.withLock { $0.accepted += 1 }
            Glibc.close(connection)
        }
        state.withLock { $0.finished = true }
    }

    func stop() async {
        state.withLock { $0.stopped = true }
        let deadline = ContinuousClock.now + .seconds(1)
        while !state.withLock({ $0.finished }) && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        Glibc.close(fd)
    }

    struct SocketFailure: Error {
        let call: String
    }
}

// An upstream that cannot be reached, and the breaker in front of it.
extension ForwardUnaryTests {
    @Test("an upstream nobody listens on: UNAVAILABLE UPSTREAM_UNAVAILABLE naming it, and the breaker opens")
    func deadUpstream() async throws {
        let probe = try Self.upstreamServer(log: UpstreamLog())
        let port = try probe.start()
        await probe.shutdown()  // the port is free again: connections are refused
        try await Self.withGateway(upstreamPort: port) { gateway in
            // An idempotent call is retried, each failed attempt counting: one call opens the breaker.
            let error = await Self.expectError(.unavailable, reason: "UPSTREAM_UNAVAILABLE") {
                try await gateway.client.unary(NoteContract.get, Note(text: "x"), options: Self.options)
            }
            #expect(error?.message.contains("note-svc") == true)
            #expect(gateway.upstream.breaker.isOpen)
            let again = await Self.expectError(.unavailable, reason: "UPSTREAM_UNAVAILABLE") {
                try await gateway.client.unary(NoteContract.put, Note(text: "x"), options: Self.options)
            }
            #expect(again?.message.contains("note-svc") == true)
        }
    }

    @Test("an upstream that drops every connection opens the breaker within one call, and the next call never reaches it")
    func breakerAnswersFast() async throws {
        let slamming = try SlammingUpstream()
        do {
            try await Self.withGateway(upstreamPort: slamming.port) { gateway in
                await Self.expectError(.unavailable, reason: "UPSTREAM_UNAVAILABLE") {
                    try await gateway.client.unary(NoteContract.get, Note(text: "x"), options: Self.options)
                }
                #expect(gateway.upstream.breaker.isOpen)
                let attempts = slamming.accepted
                // The default breaker opens at 3 failures in a row: the retries stop there.
                #expect(attempts == 3, "the upstream saw \(attempts) connections")
                for method in [NoteContract.get, NoteContract.put] {
                    let (_, elapsed) = await Self.timed {
                        await Self.expectError(.unavailable, reason: "UPSTREAM_UNAVAILABLE") {
                            try await gateway.client.unary(method, Note(text: "x"), options: Self.options)
                        }
                    }
                    #expect(elapsed < .seconds(1), "the open breaker took \(elapsed) to answer")
                }
                try await Task.sleep(for: .milliseconds(100))  // room for a connection, which must not come
                #expect(slamming.accepted == attempts, "calls went through the open breaker")
            }
        } catch {
            await slamming.stop()
            throw error
        }
        await slamming.stop()
    }

    @Test("a non-idempotent call is not retried: each counts once against the breaker, which opens at the third")
    func nonIdempotentCountsOnce() async throws {
        let slamming = try SlammingUpstream()
        do {
            try await Self.withGateway(upstreamPort: slamming.port) { gateway in
                for call in 1...3 {
                    #expect(!gateway.upstream.breaker.isOpen, "open before call \(call)")
                    await Self.expectError(.unavailable, reason: "UPSTREAM_UNAVAILABLE") {
                        try await gateway.client.unary(NoteContract.put, Note(text: "x"), options: Self.options)
                    }
                    #expect(slamming.accepted == call)
                }
                #expect(gateway.upstream.breaker.isOpen)
            }
        } catch {
            await slamming.stop()
            throw error
        }
        await slamming.stop()
    }
}
