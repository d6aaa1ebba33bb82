import Foundation
import RPC
import RPCHTTP2
import Testing

extension LiveTests {
    /// Graceful shutdown: in-flight calls finish, new ones are refused.
    @Suite("Graceful shutdown")
    struct ShutdownTests {
        @Test("shutdown lets an in-flight call finish, then new calls fail with UNAVAILABLE")
        func inFlightCallFinishes() async throws {
            try await withLiveServer { live in
                let client = live.client
                let sleeping = Task {
                    try await client.unary(EchoContract.sleep, SleepRequest(millis: 500), options: CallOptions(timeout: .seconds(10)))
                }
                let started = await eventually(within: .seconds(10)) { live.probe.count(.sleepStarted) == 1 }
                try #require(started, "the Sleep handler never started")
                try await Task.sleep(for: .milliseconds(100))
                let server = live.server
                let (_, shutdownTook) = await timed {
                    async let shutdown: Void = server.shutdown()
                    let result = await sleeping.result
                    switch result {
                    case .success(let response): #expect(response.text == "slept")
                    case .failure(let error): Issue.record("the in-flight call failed during shutdown: \(error)")
                    }
                    await shutdown
                }
                #expect(live.probe.count(.sleepCancelled) == 0)
                #expect(shutdownTook < .seconds(5), "shutdown took \(shutdownTook)")

                await expectRPCError(.unavailable) {
                    try await client.unary(EchoContract.unary, TextMessage(text: "after shutdown"))
                }
                let fresh = try live.makeClient()
                await expectRPCError(.unavailable) {
                    try await fresh.unary(EchoContract.unary, TextMessage(text: "after shutdown"))
                }
                await fresh.close()
            }
        }
    }
}
