import Foundation
@testable import gateway
import RPC
import RPCHTTP2
import ServiceKit
import ServiceTestSupport
import Synchronization
import Testing

// An upstream that cannot be reached, and the breaker in front of it.
extension ForwardUnaryLiveTests {
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
        let slamming = try SlammingListener()
        do {
            try await Self.withGateway(upstreamPort: slamming.port, upstreamConfiguration: .countingAttempts) { gateway in
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
        let slamming = try SlammingListener()
        do {
            try await Self.withGateway(upstreamPort: slamming.port, upstreamConfiguration: .countingAttempts) { gateway in
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

extension ClientConfiguration {
    /// The upstream configuration without a reconnect backoff: a connection dropped before
    /// the server's SETTINGS starts one, during which attempts fail without connecting; without
    /// it every attempt reaches the listener, which counts them.
    static var countingAttempts: ClientConfiguration {
        var configuration = ClientConfiguration.upstream
        configuration.reconnectInitialBackoff = .zero
        return configuration
    }
}
