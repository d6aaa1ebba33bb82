import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

// Graceful shutdown with a callback call in flight.
extension LiveTests.CallbackHandlerLiveTests {
    @Test("graceful shutdown waits for a callback call in flight to be answered, then completes", arguments: [64 * 1024, 0])
    func shutdownWaitsForTheAnswer(inlineStartLimit: Int) async throws {
        try await Self.withServer(configure: { $0.inlineStartLimit = inlineStartLimit }) { fixture in
            let client = fixture.client
            let call = Task {
                try await client.unary(CallbackContract.answer, TextMessage(text: "held:shutdown"), options: Self.options())
            }
            let held = await eventually(within: .seconds(5)) { fixture.probe.held("shutdown") != nil }
            try #require(held, "the handler never started")
            let server = fixture.server
            let shutDown = Counter()
            let shutdown = Task {
                await server.shutdown()
                shutDown.add(1)
            }
            // Long enough for a shutdown that does not count the call to be over: it would wait
            // 500 ms for connections to close, then close them under the call.
            try await Task.sleep(for: .milliseconds(1000))
            #expect(shutDown.value == 0, "shutdown finished with a call in flight")
            let responder = try #require(fixture.probe.held("shutdown"))
            let (_, tookAfterAnswer) = await timed {
                DispatchQueue.global().async {
                    responder.respond(.success(Data(#"{"text":"answered in time","onLoop":false,"inTask":false,"thread":"","requestID":"","keyHolder":""}"#.utf8)))
                }
                switch await call.result {
                case .success(let answer): #expect(answer.text == "answered in time")
                case .failure(let error): Issue.record("the in-flight call failed during shutdown: \(error)")
                }
                await shutdown.value
            }
            #expect(shutDown.value == 1)
            #expect(tookAfterAnswer < .seconds(5), "shutdown took \(tookAfterAnswer) after the answer")
            #expect(fixture.probe.cancelled("held:shutdown") == 0)
            await expectRPCError(.unavailable) {
                try await client.unary(CallbackContract.answer, TextMessage(text: "now"), options: Self.options())
            }
        }
    }
}
