import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

extension LiveTests {
    /// Graceful shutdown: in-flight calls finish, new ones are refused.
    @Suite("Graceful shutdown")
    struct ShutdownLiveTests {
        @Test("a handler that outlives its connection finishes without harm, and the server keeps serving")
        func handlerOutlivesConnection() async throws {
            // Full per-call logging, which reads the call's connection after the handler ends.
            try await withLiveServer(logger: discardingLogger) { live in
                let other = try live.makeClient()
                let call = Task {
                    try await other.unary(FixtureContract.stubbornSleep, SleepRequest(millis: 300), options: CallOptions(timeout: .seconds(10)))
                }
                let started = await eventually(within: .seconds(10)) { live.probe.count(.stubbornStarted) == 1 }
                try #require(started, "the handler never started")
                await other.close()  // the server closes the connection under the running handler
                _ = await call.result
                let finished = await eventually(within: .seconds(5)) { live.probe.count(.stubbornFinished) == 1 }
                #expect(finished)
                try await Task.sleep(for: .milliseconds(50))  // let the handler's finish reach the closed connection
                let answer = try await live.client.unary(EchoContract.unary, TextMessage(text: "still serving"))
                #expect(answer.text == "still serving")
            }
        }

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
