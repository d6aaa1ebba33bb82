import Foundation
import RPC
import RPCHTTP2
import Testing
import JSON

// Errors of immediate calls: thrown by the handler, or found before it runs.
extension LiveTests.ImmediateHandlerLiveTests {
    @Test("a thrown RPCError reaches the client with code, reason, message and details; other errors are a generic INTERNAL",
          arguments: [64 * 1024, 0])
    func thrownErrors(inlineStartLimit: Int) async throws {
        try await Self.withServer(configure: { $0.inlineStartLimit = inlineStartLimit }) { fixture in
            let client = fixture.client
            let failed = await expectRPCError(.notFound, reason: "NO_SUCH_THING") {
                try await client.unary(ImmediateContract.report, TextMessage(text: "fail:NOT_FOUND:NO_SUCH_THING:Nothing here: 100% ✓"))
            }
            #expect(failed?.message == "Nothing here: 100% ✓")
            let invalid = await expectRPCError(.invalidArgument) {
                try await client.unary(ImmediateContract.report, TextMessage(text: "invalid-field"))
            }
            #expect(invalid?.details?["fieldViolations"]?.arrayValue?.first?["field"]?.stringValue == "email")
            let crashed = await expectRPCError(.internal) {
                try await client.unary(ImmediateContract.report, TextMessage(text: "crash"))
            }
            #expect(crashed?.message == "Internal error.")
            #expect(crashed?.reason == nil)
            #expect(!(crashed?.message.contains("0451") ?? true))
            #expect(fixture.runs.value == 3)
            // The connection still serves.
            let next = try await client.unary(ImmediateContract.report, TextMessage(text: "after"))
            #expect(next.text == "after")
            #expect(next.inTask == (inlineStartLimit == 0))  // the path this case exercises
        }
    }

    @Test("malformed JSON is INVALID_ARGUMENT MALFORMED_MESSAGE and the handler does not run", arguments: [64 * 1024, 0])
    func malformedJSON(inlineStartLimit: Int) async throws {
        try await Self.withServer(configure: { $0.inlineStartLimit = inlineStartLimit }) { fixture in
            for body in ["not json", "{", #"{"text":5}"#] {
                await expectRPCError(.invalidArgument, reason: "MALFORMED_MESSAGE") { try await Self.rawCall(fixture, [body]) }
            }
            #expect(fixture.runs.value == 0)
            let next = try await fixture.client.unary(ImmediateContract.report, TextMessage(text: "after"))
            #expect(next.inTask == (inlineStartLimit == 0))  // the path this case exercises
        }
    }

    @Test("zero and two request messages are UNIMPLEMENTED CARDINALITY_VIOLATION and the handler does not run",
          arguments: [64 * 1024, 0])
    func cardinality(inlineStartLimit: Int) async throws {
        try await Self.withServer(configure: { $0.inlineStartLimit = inlineStartLimit }) { fixture in
            let none = await expectRPCError(.unimplemented, reason: "CARDINALITY_VIOLATION") { try await Self.rawCall(fixture, []) }
            #expect(none?.message == Router.noRequestMessage.message)
            let two = await expectRPCError(.unimplemented, reason: "CARDINALITY_VIOLATION") {
                try await Self.rawCall(fixture, [#"{"text":"one"}"#, #"{"text":"two"}"#])
            }
            #expect(two?.message == Router.extraRequestMessage.message)
            #expect(fixture.runs.value == 0)
            let next = try await fixture.client.unary(ImmediateContract.report, TextMessage(text: "after"))
            #expect(next.text == "after")
            #expect(next.inTask == (inlineStartLimit == 0))  // the path this case exercises
        }
    }
}
