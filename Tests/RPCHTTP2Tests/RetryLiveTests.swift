import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

extension LiveTests {
    /// gRFC A6 retries: idempotent methods retry `UNAVAILABLE` before any response header; others
    /// fail at once.
    @Suite("Retries")
    struct RetryLiveTests {
        @Test("an idempotent call to a dead port fails UNAVAILABLE after its retries, in bounded time")
        func idempotentOnDeadPort() async throws {
            let client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: try deadPort()))
            let (_, elapsed) = await timed {
                await expectRPCError(.unavailable) {
                    try await client.unary(HealthContract.check, HealthCheckRequest())
                }
            }
            await client.close()
            #expect(elapsed < .seconds(5), "took \(elapsed)")
        }

        @Test("a non-idempotent call to a dead port fails UNAVAILABLE at once")
        func nonIdempotentOnDeadPort() async throws {
            let client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: try deadPort()))
            let (_, elapsed) = await timed {
                await expectRPCError(.unavailable) {
                    try await client.unary(EchoContract.unary, TextMessage(text: "x"))
                }
            }
            await client.close()
            #expect(elapsed < .seconds(1), "took \(elapsed)")
        }

        @Test("an idempotent call is attempted 5 times against a server that drops every connection")
        func idempotentAttempts() async throws {
            let listener = try SlammingListener()
            // No reconnect backoff (see the next test), so that every attempt connects and is counted.
            var configuration = ClientConfiguration()
            configuration.reconnectInitialBackoff = .zero
            let client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: listener.port), configuration: configuration)
            let (_, elapsed) = await timed {
                await expectRPCError(.unavailable) {
                    try await client.unary(HealthContract.check, HealthCheckRequest())
                }
            }
            await client.close()
            _ = await eventually(within: .milliseconds(300)) { listener.accepted >= 5 }
            let attempts = listener.accepted
            await listener.stop()
            #expect(attempts == 5, "the server saw \(attempts) connections")
            #expect(elapsed < .seconds(5), "took \(elapsed)")
        }

        @Test("a server that drops connections before its SETTINGS gets the reconnect backoff: calls meanwhile do not connect")
        func droppedBeforeSettingsBacksOff() async throws {
            let listener = try SlammingListener()
            var configuration = ClientConfiguration()
            configuration.reconnectInitialBackoff = .seconds(30)
            let client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: listener.port), configuration: configuration)
            // The TCP connect succeeds each time; the connection never becomes HTTP/2. Counting
            // it as connected reset the backoff, and every call reconnected at once.
            for _ in 0..<5 {
                await expectRPCError(.unavailable) { try await client.unary(EchoContract.unary, TextMessage(text: "x")) }
            }
            await client.close()
            try await Task.sleep(for: .milliseconds(100))
            let attempts = listener.accepted
            await listener.stop()
            #expect(attempts == 1, "the server saw \(attempts) connections")
        }

        @Test("a non-idempotent call is attempted once against a server that drops every connection")
        func nonIdempotentAttempts() async throws {
            let listener = try SlammingListener()
            let client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: listener.port))
            await expectRPCError(.unavailable) {
                try await client.unary(EchoContract.unary, TextMessage(text: "x"))
            }
            await client.close()
            try await Task.sleep(for: .milliseconds(200))
            let attempts = listener.accepted
            await listener.stop()
            #expect(attempts == 1, "the server saw \(attempts) connections")
        }
    }
}
