import Contracts
import Foundation
import Logging
import RPC
import RPCHTTP2
import ServiceKit
import Synchronization
import Testing

/// What an immediate test handler saw of itself and its call.
struct HandlerSighting: RPCMessage, Equatable {
    /// The request's text.
    var text: String
    /// Whether it ran on a loop of the server's group.
    var onLoop: Bool
    /// Whether it ran inside a Swift task.
    var inTask: Bool
    /// The name of the thread it ran on ("" when unnamed).
    var thread: String
    /// The call's request id, from its context.
    var requestID: String
    /// What the interceptor attached, "" when nothing.
    var keyHolder: String

    static let fields = [
        FieldDescriptor("text", "String"), FieldDescriptor("onLoop", "Bool"), FieldDescriptor("inTask", "Bool"),
        FieldDescriptor("thread", "String"), FieldDescriptor("requestID", "String"), FieldDescriptor("keyHolder", "String"),
    ]
}

/// The methods of the immediate-handler tests.
enum ImmediateContract {
    static let service = "test.immediate.v1.ImmediateService"
    /// Immediate: reports where it ran. `fail:CODE:REASON:MESSAGE` throws that error,
    /// `invalid-field` throws `RPCError.invalidField("email", …)`, `crash` a plain Swift error.
    static let report = MethodDescriptor<TextMessage, HandlerSighting>(service: service, method: "Report", kind: .unary)
    /// The same handler registered with the ordinary, async `unary`.
    static let ordinaryReport = MethodDescriptor<TextMessage, HandlerSighting>(
        service: service, method: "OrdinaryReport", kind: .unary)
    /// Immediate with auth `admin`: the only method ``AdminKeyGate`` applies to.
    static let guarded = MethodDescriptor<TextMessage, HandlerSighting>(
        service: service, method: "Guarded", kind: .unary, auth: .admin)
}

/// A plain Swift error whose description must not reach the client.
private struct SecretFailure: Error, CustomStringConvertible {
    var description: String { "SecretFailure: the vault code is 0451" }
}

/// What ``AdminKeyGate`` attaches to a context.
private enum KeyHolderKey: AttributeKey {
    typealias Value = String
}

/// Guards admin methods by `x-api-key: let-me-in`; applies to nothing else.
private struct AdminKeyGate: ServerInterceptor {
    let prepares: Counter

    func applies(to method: MethodInfo) -> Bool { method.auth == .admin }

    func prepare(_ context: inout ServerContext) async throws {
        prepares.add(1)
        guard context.metadata[MetadataKey.apiKey] == "let-me-in" else {
            throw RPCError(code: .unauthenticated, reason: "MISSING_API_KEY", message: "Say the word.")
        }
        context.attributes[KeyHolderKey.self] = "admin"
    }
}

/// One test's server of ``ImmediateContract`` (plus health and Describe) on a single loop of
/// its own, so handlers can tell whether they run on it, and a client of it.
struct ImmediateFixture: Sendable {
    let server: HTTP2Server
    let client: RPCClient
    let port: Int
    /// How often a handler body ran.
    let runs: Counter
    /// How often the interceptor ran (always 0 without one).
    let prepares: Counter
    /// The server's health.
    let health: HealthMonitor
}

extension LiveTests {
    /// Unary methods registered with `immediateUnary`/`registerImmediate`: served on the loop
    /// thread without a task when the request is small and no interceptor applies, else in a
    /// task like any handler, with the same answers either way.
    @Suite("Immediate unary handlers")
    struct ImmediateHandlerTests {
        /// The loop group's name: its one thread is "immediate-0".
        static let loopName = "immediate"

        // MARK: Fixture

        /// The shared handler of the test methods (synchronous, so it may run immediately).
        static func sighting(_ request: TextMessage, _ context: ServerContext, group: EventLoopGroup) throws -> HandlerSighting {
            if request.text.hasPrefix("fail:") {
                let parts = request.text.split(separator: ":", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
                guard parts.count == 4, let code = RPCCode(name: parts[1]) else {
                    throw RPCError(code: .invalidArgument, reason: "BAD_FIXTURE", message: "fail:CODE:REASON:MESSAGE")
                }
                throw RPCError(code: code, reason: parts[2], message: parts[3])
            }
            if request.text == "invalid-field" { throw RPCError.invalidField("email", "is invalid") }
            if request.text == "crash" { throw SecretFailure() }
            return HandlerSighting(
                text: request.text, onLoop: group.indexOfCurrentLoop() != nil, inTask: withUnsafeCurrentTask { $0 != nil },
                thread: Thread.current.name ?? "", requestID: context.requestID,
                keyHolder: context.attributes[KeyHolderKey.self] ?? "")
        }

        static func router(group: EventLoopGroup, runs: Counter, prepares: Counter, health: HealthMonitor, gated: Bool) -> Router {
            var router = Router()
            if gated { router.addInterceptor(AdminKeyGate(prepares: prepares)) }
            router.immediateUnary(ImmediateContract.report) { request, context in
                runs.add(1)
                return try sighting(request, context, group: group)
            }
            router.unary(ImmediateContract.ordinaryReport) { request, context in
                runs.add(1)
                return try sighting(request, context, group: group)
            }
            router.immediateUnary(ImmediateContract.guarded) { request, context in
                runs.add(1)
                return try sighting(request, context, group: group)
            }
            router.addStandardServices(health: health)
            return router
        }

        /// Starts the fixture server (with ``AdminKeyGate`` when `gated`) and a client, runs
        /// `body`, then closes both, whether `body` returned or threw.
        @discardableResult
        static func withServer<Result>(
            gated: Bool = false, logger: Logger = discardingLogger, configure: (inout ServerConfiguration) -> Void = { _ in },
            _ body: (ImmediateFixture) async throws -> Result
        ) async throws -> Result {
            var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
            configure(&configuration)
            let group = try EventLoopGroup(count: 1, name: loopName)
            let runs = Counter()
            let prepares = Counter()
            let health = HealthMonitor()
            let server = HTTP2Server(
                configuration: configuration,
                router: router(group: group, runs: runs, prepares: prepares, health: health, gated: gated),
                logger: logger, group: group, ownsGroup: true)
            // A server that never started does not stop its loops.
            return try await withStartedServer(server, cannotStart: { await group.shutdown() }) { port, client in
                try await body(ImmediateFixture(server: server, client: client, port: port, runs: runs, prepares: prepares, health: health))
            }
        }

        /// Sends `messages` as raw request messages of a unary call and reads the answer.
        private static func rawCall(_ fixture: ImmediateFixture, _ messages: [String]) async throws -> Data? {
            try await fixture.client.withCall(path: ImmediateContract.report.path, options: CallOptions(timeout: .seconds(5))) { call in
                for message in messages { try await call.send(Data(message.utf8)) }
                call.finishSending()
                return try await call.nextMessage()
            }
        }

        /// Polls until `lines` holds `count` call lines; records an issue if it never does.
        private static func waitForCallLines(_ lines: CapturedLogLines, count: Int) async {
            let arrived = await eventually(within: .seconds(5)) { lines.calls.count >= count }
            #expect(arrived, "only \(lines.calls.count) of \(count) call lines were logged")
        }

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

        // MARK: Errors

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

        // MARK: Request id and logging

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
}
