import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

// The one log line of every callback call.
extension LiveTests.CallbackHandlerLiveTests {
    @Test("every callback call is logged exactly once with its status, reason and request id")
    func oneLogLinePerCall() async throws {
        let lines = CapturedLogLines()
        let expected: [String: (status: String, reason: String?)] = [
            "cb-log-now": ("OK", nil), "cb-log-queue": ("OK", nil), "cb-log-detached": ("OK", nil),
            "cb-log-big": ("OK", nil), "cb-log-fail": ("NOT_FOUND", "GONE"), "cb-log-crash": ("INTERNAL", nil),
            "cb-log-twice": ("OK", nil), "cb-log-key": ("UNAUTHENTICATED", "MISSING_API_KEY"),
            "cb-log-user": ("OK", nil), "cb-log-empty": ("UNIMPLEMENTED", "CARDINALITY_VIOLATION"),
            "cb-log-cancel": ("CANCELLED", nil),
        ]
        try await Self.withServer(gated: true, logger: lines.logger, configure: { $0.inlineStartLimit = 1024 }) { fixture in
            let client = fixture.client
            for text in ["now", "queue", "detached"] {
                _ = try await client.unary(CallbackContract.answer, TextMessage(text: text), options: Self.options("cb-log-\(text)"))
            }
            let big = try await client.unary(
                CallbackContract.answer, TextMessage(text: "queue " + String(repeating: "x", count: 2000)), options: Self.options("cb-log-big"))
            #expect(big.inTask)
            await expectRPCError(.notFound) {
                try await client.unary(CallbackContract.answer, TextMessage(text: "fail:NOT_FOUND:GONE:gone"), options: Self.options("cb-log-fail"))
            }
            await expectRPCError(.internal) {
                try await client.unary(CallbackContract.answer, TextMessage(text: "crash"), options: Self.options("cb-log-crash"))
            }
            _ = try await client.unary(CallbackContract.answer, TextMessage(text: "twice"), options: Self.options("cb-log-twice"))
            await expectRPCError(.unauthenticated) {
                try await client.unary(CallbackContract.keyed, TextMessage(text: "now"), options: Self.options("cb-log-key"))
            }
            _ = try await client.unary(
                CallbackContract.signedIn, TextMessage(text: "queue"), options: Self.options("cb-log-user", ["x-user": "ada"]))
            await expectRPCError(.unimplemented) {
                try await client.withCall(path: CallbackContract.answer.path, options: Self.options("cb-log-empty")) { call in
                    call.finishSending()
                    return try await call.nextMessage()
                }
            }
            let cancelled = Task {
                try await client.unary(CallbackContract.answer, TextMessage(text: "hang"), options: Self.options("cb-log-cancel"))
            }
            let started = await eventually(within: .seconds(5)) { fixture.probe.started("hang") == 1 }
            try #require(started, "the hanging handler never started")
            cancelled.cancel()
            _ = await cancelled.result
            await Self.waitForLines(lines, Array(expected.keys))
            try await Task.sleep(for: .milliseconds(100))  // room for a second line, which must not come
        }
        let calls = lines.calls.map(\.fields)
        #expect(calls.count == expected.count, "lines: \(calls)")
        for (requestID, (status, reason)) in expected {
            let logged = calls.filter { $0["request-id"] == requestID }
            #expect(logged.count == 1, "\(requestID): \(logged)")
            #expect(logged.first?["status"] == status, "\(requestID): \(logged)")
            #expect(logged.first?["reason"] == reason, "\(requestID): \(logged)")
        }
        #expect(calls.allSatisfy { $0["duration-ms"] != nil && $0["peer"] != nil && $0["method"]?.hasPrefix("/\(CallbackContract.service)/") == true })
        // The cause of an INTERNAL answer is logged, though the client never sees it.
        #expect(calls.first { $0["request-id"] == "cb-log-crash" }?["cause"]?.contains("1138") == true)
    }
}
