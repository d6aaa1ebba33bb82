import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

// Immediate and ordinary interceptors in front of callback handlers.
extension LiveTests.CallbackHandlerLiveTests {
    @Test("an immediate interceptor runs on the loop with no task; when it rejects the handler never runs")
    func immediateInterceptor() async throws {
        try await Self.withServer(gated: true) { fixture in
            let client = fixture.client
            // Neither gate applies to Answer: it stays taskless and no gate runs.
            let open = try await client.unary(CallbackContract.answer, TextMessage(text: "queue open"), options: Self.options())
            #expect(!open.inTask)
            #expect(open.keyHolder == "")
            #expect(fixture.probe.gateRuns.isEmpty)

            let keyed = try await client.unary(
                CallbackContract.keyed, TextMessage(text: "queue keyed"), options: Self.options(nil, [MetadataKey.apiKey: "let-me-in"]))
            #expect(keyed.keyHolder == "admin")
            #expect(!keyed.inTask)
            #expect(keyed.onLoop)
            #expect(keyed.thread == "\(Self.loopName)-0")

            await expectRPCError(.unauthenticated, reason: "MISSING_API_KEY") {
                try await client.unary(CallbackContract.keyed, TextMessage(text: "queue no key"), options: Self.options())
            }
            #expect(fixture.probe.started("queue no key") == 0)
            #expect(fixture.probe.totalStarts == 2)
            let runs = fixture.probe.gateRuns
            #expect(runs.map { $0.gate } == ["key", "key"])
            #expect(runs.allSatisfy { !$0.inTask && $0.onLoop })
        }
    }

    @Test("an ordinary interceptor that applies sends the call through a task, runs first, and can reject")
    func ordinaryInterceptor() async throws {
        try await Self.withServer(gated: true) { fixture in
            let client = fixture.client
            let signedIn = try await client.unary(
                CallbackContract.signedIn, TextMessage(text: "queue in"), options: Self.options(nil, ["x-user": "ada"]))
            #expect(signedIn.text == "queue in")
            #expect(signedIn.keyHolder == "user:ada")
            #expect(signedIn.inTask)
            let detached = try await client.unary(
                CallbackContract.signedIn, TextMessage(text: "detached in"), options: Self.options(nil, ["x-user": "bob"]))
            #expect(detached.keyHolder == "user:bob")

            await expectRPCError(.unauthenticated, reason: "NO_USER") {
                try await client.unary(CallbackContract.signedIn, TextMessage(text: "queue nobody"), options: Self.options())
            }
            #expect(fixture.probe.started("queue nobody") == 0)
            let runs = fixture.probe.gateRuns
            #expect(runs.map { $0.gate } == ["user", "user", "user"])
            #expect(runs.allSatisfy { $0.inTask })
        }
    }

    @Test("a call in a task is cancelled through the bridge while an ordinary interceptor applies")
    func cancellationThroughInterceptedCall() async throws {
        try await Self.withServer(gated: true) { fixture in
            let client = fixture.client
            let call = Task {
                try await client.unary(CallbackContract.signedIn, TextMessage(text: "hang"), options: Self.options(nil, ["x-user": "ada"]))
            }
            let started = await eventually(within: .seconds(5)) { fixture.probe.started("hang") == 1 }
            try #require(started, "the handler never started")
            call.cancel()
            _ = await call.result
            let cancelled = await eventually(within: .seconds(3)) { fixture.probe.cancelled("hang") == 1 }
            #expect(cancelled, "the handler's cancel action never ran")
        }
    }
}
