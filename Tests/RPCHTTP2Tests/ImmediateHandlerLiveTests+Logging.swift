import Foundation
import Logging
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

// The request id an immediate handler sees, and the one log line of every immediate call.
extension LiveTests.ImmediateHandlerLiveTests {
    /// Polls until `lines` holds `count` call lines; records an issue if it never does.
    private static func waitForCallLines(_ lines: CapturedLogLines, count: Int) async {
        let arrived = await eventually(within: .seconds(5)) { lines.calls.count >= count }
        #expect(arrived, "only \(lines.calls.count) of \(count) call lines were logged")
    }

    @Test("the handler sees the caller's x-request-id, or the id the server made up and logs")
    func requestID() async throws {
        let lines = CapturedLogLines()
        try await Self.withServer(logger: lines.logger) { fixture in
            let given = try await fixture.client.unary(
                ImmediateContract.report, TextMessage(text: "id"),
                options: CallOptions(metadata: [MetadataKey.requestID: "imm-req-42"]))
            #expect(given.requestID == "imm-req-42")
            #expect(!given.inTask)
            let madeUp = try await fixture.client.unary(ImmediateContract.report, TextMessage(text: "no id"))
            #expect(!madeUp.requestID.isEmpty)
            #expect(madeUp.requestID != "imm-req-42")
            await Self.waitForCallLines(lines, count: 2)
            #expect(lines.calls.map { $0.fields["request-id"] } == ["imm-req-42", madeUp.requestID])
        }
    }

    @Test("every immediate call is logged once with its method, status, reason and request id")
    func callLogLines() async throws {
        let lines = CapturedLogLines()
        try await Self.withServer(logger: lines.logger) { fixture in
            let client = fixture.client
            let ok = try await client.unary(
                ImmediateContract.report, TextMessage(text: "ok"), options: CallOptions(metadata: [MetadataKey.requestID: "imm-log-1"]))
            #expect(!ok.inTask)
            await expectRPCError(.notFound) {
                try await client.unary(
                    ImmediateContract.report, TextMessage(text: "fail:NOT_FOUND:NO_SUCH_THING:gone"),
                    options: CallOptions(metadata: [MetadataKey.requestID: "imm-log-2"]))
            }
            await expectRPCError(.internal) {
                try await client.unary(
                    ImmediateContract.report, TextMessage(text: "crash"), options: CallOptions(metadata: [MetadataKey.requestID: "imm-log-3"]))
            }
            await expectRPCError(.unimplemented) { try await Self.rawCall(fixture, []) }
            await Self.waitForCallLines(lines, count: 4)
        }
        let calls = lines.calls
        #expect(calls.count == 4, "lines: \(calls)")
        guard calls.count == 4 else { return }
        #expect(calls.allSatisfy { $0.fields["method"] == ImmediateContract.report.path })
        #expect(calls.map { $0.fields["status"] } == ["OK", "NOT_FOUND", "INTERNAL", "UNIMPLEMENTED"])
        #expect(calls.map { $0.fields["reason"] } == [nil, "NO_SUCH_THING", nil, "CARDINALITY_VIOLATION"])
        #expect(calls.map(\.level) == [.info, .info, .error, .info])
        #expect(calls.prefix(3).map { $0.fields["request-id"] } == ["imm-log-1", "imm-log-2", "imm-log-3"])
        #expect(calls.allSatisfy { $0.fields["duration-ms"] != nil && $0.fields["peer"] != nil })
        // The cause of an INTERNAL error is logged, though the client never sees it.
        #expect(calls[2].fields["cause"]?.contains("0451") == true, "line: \(calls[2])")
    }
}
