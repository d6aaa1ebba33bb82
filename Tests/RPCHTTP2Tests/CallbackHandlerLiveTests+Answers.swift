import Contracts
import Foundation
import RPC
import RPCHTTP2
import Testing

// Where a callback handler starts, who answers it, and how its errors reach the client.
extension LiveTests.CallbackHandlerLiveTests {
    // MARK: Where the handler runs and who answers

    @Test("answered at once, from a dispatch queue or from a detached task: the client gets the answer; the handler started on the loop thread with no task",
          arguments: ["now", "queue", "detached"])
    func answeredFromAnyThread(text: String) async throws {
        try await Self.withServer { fixture in
            let answer = try await fixture.client.unary(
                CallbackContract.answer, TextMessage(text: text), options: Self.options("cb-where-\(text)"))
            #expect(answer.text == text)
            #expect(answer.onLoop)
            #expect(!answer.inTask)
            #expect(answer.thread == "\(Self.loopName)-0")
            #expect(answer.requestID == "cb-where-\(text)")
            #expect(fixture.probe.started(text) == 1)
            #expect(fixture.probe.cancelled(text) == 0)
        }
    }

    @Test("with inlineStartLimit 0 the handler runs in a task (the async bridge) and still answers from any thread",
          arguments: [(handlersStayOnLoop: false, onLoop: false), (handlersStayOnLoop: true, onLoop: true)])
    func taskBridge(handlersStayOnLoop: Bool, onLoop: Bool) async throws {
        try await Self.withServer(configure: {
            $0.inlineStartLimit = 0
            $0.handlersStayOnLoop = handlersStayOnLoop
        }) { fixture in
            for text in ["now", "queue", "detached"] {
                let answer = try await fixture.client.unary(CallbackContract.answer, TextMessage(text: text), options: Self.options())
                #expect(answer.text == text)
                #expect(answer.inTask, "\(text)")
                #expect(answer.onLoop == onLoop, "\(text)")
            }
        }
    }

    @Test("a request above inlineStartLimit goes through a task; one at or below it starts without")
    func requestSizeDecides() async throws {
        try await Self.withServer(configure: { $0.inlineStartLimit = 1024 }) { fixture in
            let small = try await fixture.client.unary(CallbackContract.answer, TextMessage(text: "queue small"), options: Self.options())
            #expect(!small.inTask)
            let bigText = "queue " + String(repeating: "b", count: 4000)
            let big = try await fixture.client.unary(CallbackContract.answer, TextMessage(text: bigText), options: Self.options())
            #expect(big.text == bigText)
            #expect(big.inTask)
        }
    }

    @Test("300 concurrent callback calls, answered from three kinds of thread, each get their own answer")
    func concurrentCalls() async throws {
        try await Self.withServer { fixture in
            let kinds = ["now", "queue", "detached"]
            let answers = try await withThrowingTaskGroup(of: (Int, HandlerSighting).self) { group in
                for index in 0..<300 {
                    group.addTask {
                        let text = "\(kinds[index % 3]) \(index)"
                        return (index, try await fixture.client.unary(CallbackContract.answer, TextMessage(text: text), options: Self.options()))
                    }
                }
                var answers: [Int: HandlerSighting] = [:]
                for try await (index, answer) in group { answers[index] = answer }
                return answers
            }
            #expect(answers.count == 300)
            #expect(answers.allSatisfy { $0.value.text == "\(kinds[$0.key % 3]) \($0.key)" })
            #expect(answers.values.allSatisfy { !$0.inTask })
            #expect(fixture.probe.totalStarts == 300)
        }
    }

    // MARK: Errors

    @Test("an error answer reaches the client with code, reason and message; a plain error is a generic INTERNAL",
          arguments: [64 * 1024, 0])
    func errorAnswers(inlineStartLimit: Int) async throws {
        try await Self.withServer(configure: { $0.inlineStartLimit = inlineStartLimit }) { fixture in
            let client = fixture.client
            let failed = await expectRPCError(.notFound, reason: "NO_SUCH_THING") {
                try await client.unary(CallbackContract.answer, TextMessage(text: "fail:NOT_FOUND:NO_SUCH_THING:Nothing here ✓"))
            }
            #expect(failed?.message == "Nothing here ✓")
            let unavailable = await expectRPCError(.failedPrecondition, reason: "NOT_NOW") {
                try await client.unary(CallbackContract.answer, TextMessage(text: "fail:FAILED_PRECONDITION:NOT_NOW:Later."))
            }
            #expect(unavailable?.message == "Later.")
            let crashed = await expectRPCError(.internal) {
                try await client.unary(CallbackContract.answer, TextMessage(text: "crash"))
            }
            #expect(crashed?.message == "Internal error.")
            #expect(crashed?.reason == nil)
            #expect(!(crashed?.message.contains("1138") ?? true))
            // The connection still serves, on the path this case exercises.
            let next = try await client.unary(CallbackContract.answer, TextMessage(text: "queue after"))
            #expect(next.text == "queue after")
            #expect(next.inTask == (inlineStartLimit == 0))
        }
    }

    @Test("a handler that answers twice, from two threads at once: the client gets one of the answers and the call ends once")
    func answeredTwice() async throws {
        let lines = CapturedLogLines()
        try await Self.withServer(logger: lines.logger) { fixture in
            let answer = try await fixture.client.unary(
                CallbackContract.answer, TextMessage(text: "twice"), options: Self.options("cb-twice"))
            #expect(["twice-0", "twice-1"].contains(answer.text))
            let next = try await fixture.client.unary(CallbackContract.answer, TextMessage(text: "now"), options: Self.options("cb-after-twice"))
            #expect(next.text == "now")
            await Self.waitForLines(lines, ["cb-twice", "cb-after-twice"])
            try await Task.sleep(for: .milliseconds(100))  // room for a second line, which must not come
            #expect(Self.lines(lines, for: "cb-twice").count == 1)
        }
    }
}
