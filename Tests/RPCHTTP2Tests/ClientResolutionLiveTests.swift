import Foundation
import RPC
import RPCHTTP2
import Testing

extension LiveTests {
    /// How the client finds its upstream: literal addresses at once, names off the event loop.
    @Suite("Client name resolution")
    struct ClientResolutionLiveTests {
        @Test("a client addressed by host name resolves it and calls")
        func hostName() async throws {
            try await withLiveServer { live in
                let client = try RPCClient(target: SocketAddressText(host: "localhost", port: live.port))
                let answer = try await client.unary(EchoContract.unary, TextMessage(text: "by name"), options: CallOptions(timeout: .seconds(5)))
                #expect(answer.text == "by name")
                await client.close()
            }
        }

        @Test("a name that does not resolve fails UNAVAILABLE within the connect timeout")
        func unresolvableName() async throws {
            var configuration = ClientConfiguration()
            configuration.connectTimeout = .milliseconds(500)
            var retry = RetryPolicy()
            retry.maxAttempts = 1
            let client = try RPCClient(target: SocketAddressText(host: "no-such-host.invalid", port: 7001), configuration: configuration, retry: retry)
            let (_, took) = await timed {
                await expectRPCError(.unavailable) {
                    try await client.unary(EchoContract.unary, TextMessage(text: "x"))
                }
            }
            #expect(took < .seconds(3), "took \(took)")
            await client.close()
        }
    }
}
