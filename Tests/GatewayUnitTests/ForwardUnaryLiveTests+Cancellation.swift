import Foundation
@testable import gateway
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

// A forwarded call cancelled by the client or by its deadline.
extension ForwardUnaryLiveTests {
    @Test("a client cancelling a forwarded call cancels the upstream call, and the breaker stays closed")
    func cancellationReachesUpstream() async throws {
        try await Self.withUpstreamAndGateway { gateway, log in
            let client = gateway.client
            let call = Task { try await client.unary(NoteContract.hang, Note(text: "x"), options: Self.options) }
            let started = await eventually(every: .milliseconds(10)) { log.started == 1 }
            try #require(started, "the upstream handler never started")
            call.cancel()
            if case .success(let note) = await call.result { Issue.record("the cancelled call succeeded with \(note)") }
            let cancelled = await eventually(every: .milliseconds(10)) { log.cancelled == 1 }
            #expect(cancelled, "the upstream handler never saw the cancellation")
            #expect(!gateway.upstream.breaker.isOpen)
            let after = try await client.unary(NoteContract.get, Note(text: "after"), options: Self.options)
            #expect(after.text == "after")
        }
    }

    @Test("a client's short deadline travels upstream: the client gets DEADLINE_EXCEEDED and the upstream call is cancelled")
    func deadlineReachesUpstream() async throws {
        try await Self.withUpstreamAndGateway { gateway, log in
            let (_, elapsed) = await Self.timed {
                await Self.expectError(.deadlineExceeded, reason: nil) {
                    try await gateway.client.unary(NoteContract.hang, Note(text: "x"), options: CallOptions(timeout: .milliseconds(300)))
                }
            }
            #expect(elapsed < .seconds(3), "a 300 ms deadline took \(elapsed)")
            let cancelled = await eventually(every: .milliseconds(10)) { log.cancelled == 1 }
            #expect(cancelled, "the upstream handler never saw the deadline")
            #expect(!gateway.upstream.breaker.isOpen)
        }
    }
}
