import Foundation
import RPC
import RPCHTTP2
import Testing

// Whether an immediate handler runs on the loop without a task, or in a task like any handler.
extension LiveTests.ImmediateHandlerLiveTests {
    // MARK: Where the handler runs

    @Test("an immediate method answers over loopback on the loop thread with no task; an ordinary unary one runs in a task")
    func runsOnTheLoopWithoutATask() async throws {
        try await Self.withServer { fixture in
            let options = CallOptions(timeout: .seconds(5))
            let immediate = try await fixture.client.unary(ImmediateContract.report, TextMessage(text: "héllo ✓"), options: options)
            #expect(immediate.text == "héllo ✓")
            #expect(immediate.onLoop)
            #expect(!immediate.inTask)
            #expect(immediate.thread == "\(Self.loopName)-0")
            // The ordinary handler also starts inline on the loop, but inside a task.
            let ordinary = try await fixture.client.unary(ImmediateContract.ordinaryReport, TextMessage(text: "x"), options: options)
            #expect(ordinary.onLoop)
            #expect(ordinary.inTask)
            #expect(fixture.runs.value == 2)
        }
    }

    @Test("without the inline start an immediate method runs in a task, on the pool or on its loop",
          arguments: [(handlersStayOnLoop: false, onLoop: false), (handlersStayOnLoop: true, onLoop: true)])
    func taskPathWhenInlineStartIsOff(handlersStayOnLoop: Bool, onLoop: Bool) async throws {
        try await Self.withServer(configure: {
            $0.inlineStartLimit = 0
            $0.handlersStayOnLoop = handlersStayOnLoop
        }) { fixture in
            let answer = try await fixture.client.unary(ImmediateContract.report, TextMessage(text: "slow path"))
            #expect(answer.text == "slow path")
            #expect(answer.inTask)
            #expect(answer.onLoop == onLoop)
        }
    }

    @Test("a request above inlineStartLimit is served in a task, one at or below it immediately")
    func requestSizeDecides() async throws {
        try await Self.withServer(configure: { $0.inlineStartLimit = 1024 }) { fixture in
            let small = try await fixture.client.unary(ImmediateContract.report, TextMessage(text: "small"))
            #expect(!small.inTask)
            let bigText = String(repeating: "b", count: 4000)
            let big = try await fixture.client.unary(ImmediateContract.report, TextMessage(text: bigText))
            #expect(big.text == bigText)
            #expect(big.inTask)
            #expect(!big.onLoop)
        }
    }

    @Test("300 concurrent immediate calls all get their own answer")
    func concurrentImmediateCalls() async throws {
        try await Self.withServer { fixture in
            let answers = try await withThrowingTaskGroup(of: (Int, HandlerSighting).self) { group in
                for index in 0..<300 {
                    group.addTask {
                        (index, try await fixture.client.unary(ImmediateContract.report, TextMessage(text: "call \(index)")))
                    }
                }
                var answers: [Int: HandlerSighting] = [:]
                for try await (index, answer) in group { answers[index] = answer }
                return answers
            }
            #expect(answers.count == 300)
            #expect(answers.allSatisfy { $0.value.text == "call \($0.key)" })
            #expect(answers.values.allSatisfy { !$0.inTask && $0.onLoop })
            #expect(fixture.runs.value == 300)
        }
    }

    // MARK: Interceptors

    @Test("an interceptor that applies to an immediate method runs first (in a task); one that does not leaves it immediate")
    func interceptorThatApplies() async throws {
        try await Self.withServer(gated: true) { fixture in
            let client = fixture.client
            // The gate applies to admin methods only: Report stays immediate.
            let open = try await client.unary(ImmediateContract.report, TextMessage(text: "open"))
            #expect(!open.inTask)
            #expect(open.keyHolder == "")
            #expect(fixture.prepares.value == 0)

            let withKey = CallOptions(metadata: [MetadataKey.apiKey: "let-me-in"], timeout: .seconds(5))
            let guarded = try await client.unary(ImmediateContract.guarded, TextMessage(text: "in"), options: withKey)
            #expect(guarded.keyHolder == "admin")
            #expect(guarded.inTask)
            #expect(fixture.prepares.value == 1)
            #expect(fixture.runs.value == 2)

            await expectRPCError(.unauthenticated, reason: "MISSING_API_KEY") {
                try await client.unary(ImmediateContract.guarded, TextMessage(text: "no key"))
            }
            #expect(fixture.prepares.value == 2)
            #expect(fixture.runs.value == 2)  // rejected before the handler
        }
    }
}
