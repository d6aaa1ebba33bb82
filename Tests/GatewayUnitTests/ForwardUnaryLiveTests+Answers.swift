import Foundation
@testable import gateway
import RPC
import RPCHTTP2
import Testing
import JSON

// The upstream's answers and errors, forwarded without a task.
extension ForwardUnaryLiveTests {
    @Test("the upstream's answer comes back unchanged, with the caller's metadata and request id forwarded")
    func answerPassesThrough() async throws {
        try await Self.withUpstreamAndGateway { gateway, log in
            let note = Note(text: "héllo ✓ \"quoted\"")
            #expect(try await gateway.client.unary(NoteContract.get, note, options: Self.options) == note)
            #expect(try await gateway.client.unary(NoteContract.put, note, options: Self.options) == note)
            let who = try await gateway.client.unary(
                NoteContract.whoAmI, Note(text: ""),
                options: CallOptions(metadata: [MetadataKey.requestID: "fw-req-1", "x-note": "noted"], timeout: .seconds(10)))
            #expect(who.text == "fw-req-1|noted|")
            #expect(log.calls("Get") == 1 && log.calls("Put") == 1 && log.calls("WhoAmI") == 1)
            #expect(!gateway.upstream.breaker.isOpen)
        }
    }

    @Test("an upstream error passes through with its code, reason, message and details, and leaves the breaker closed")
    func upstreamErrorPassesThrough() async throws {
        try await Self.withUpstreamAndGateway { gateway, log in
            for _ in 0..<5 {
                let error = await Self.expectError(.notFound, reason: "NOTE_NOT_FOUND") {
                    try await gateway.client.unary(NoteContract.fail, Note(text: "7"), options: Self.options)
                }
                #expect(error?.message == "No note 7 ✓.")
                #expect(error?.details?["id"] == .number(7))
            }
            // An idempotent method answered with an error is not retried: the upstream answered.
            #expect(log.calls("Fail") == 5)
            #expect(!gateway.upstream.breaker.isOpen)
            let still = try await gateway.client.unary(NoteContract.get, Note(text: "still"), options: Self.options)
            #expect(still.text == "still")
        }
    }

    @Test("100 concurrent forwarded calls each get their own answer")
    func concurrentCalls() async throws {
        try await Self.withUpstreamAndGateway { gateway, log in
            let answers = try await withThrowingTaskGroup(of: (Int, Note).self) { group in
                for index in 0..<100 {
                    group.addTask {
                        let method = index % 2 == 0 ? NoteContract.get : NoteContract.put
                        return (index, try await gateway.client.unary(method, Note(text: "note \(index)"), options: Self.options))
                    }
                }
                var answers: [Int: Note] = [:]
                for try await (index, note) in group { answers[index] = note }
                return answers
            }
            #expect(answers.count == 100)
            #expect(answers.allSatisfy { $0.value.text == "note \($0.key)" })
            #expect(log.calls("Get") + log.calls("Put") == 100)
        }
    }
}
