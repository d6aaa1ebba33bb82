import Contracts
import Foundation
import Logging
import RPC
import RPCHTTP2
import ServiceKit
import Synchronization
import Testing

/// The methods of the callback-handler tests.
enum CallbackContract {
    static let service = "test.callback.v1.CallbackService"
    /// A callback handler that reports where it started and answers as its text says (see
    /// ``LiveTests/CallbackHandlerTests/answer(_:context:responder:probe:group:)``).
    static let answer = MethodDescriptor<TextMessage, HandlerSighting>(service: service, method: "Answer", kind: .unary)
    /// The same handler, auth `admin`: ``ImmediateKeyGate`` (never suspends) applies to it.
    static let keyed = MethodDescriptor<TextMessage, HandlerSighting>(
        service: service, method: "Keyed", kind: .unary, auth: .admin)
    /// The same handler, auth `user`: ``SuspendingUserGate`` (an ordinary interceptor) applies to it.
    static let signedIn = MethodDescriptor<TextMessage, HandlerSighting>(
        service: service, method: "SignedIn", kind: .unary, auth: .user)
}

/// What the interceptors of the callback tests attach to a context.
private enum GateHolderKey: AttributeKey {
    typealias Value = String
}

/// A plain Swift error whose description must not reach the client.
private struct CallbackSecret: Error, CustomStringConvertible {
    var description: String { "CallbackSecret: the vault code is 1138" }
}

/// What the callback handlers and interceptors of one test server did. Thread-safe.
final class CallbackProbe: Sendable {
    private struct State {
        var started: [String: Int] = [:]
        var cancelled: [String: Int] = [:]
        var held: [String: CallResponder] = [:]
        var gateRuns: [(gate: String, inTask: Bool, onLoop: Bool)] = []
    }

    private let state = Mutex(State())

    func start(_ text: String) { state.withLock { $0.started[text, default: 0] += 1 } }
    func cancel(_ text: String) { state.withLock { $0.cancelled[text, default: 0] += 1 } }
    func hold(_ name: String, _ responder: CallResponder) { state.withLock { $0.held[name] = responder } }
    func gateRan(_ gate: String, inTask: Bool, onLoop: Bool) { state.withLock { $0.gateRuns.append((gate, inTask, onLoop)) } }

    /// How often a handler started with `text`.
    func started(_ text: String) -> Int { state.withLock { $0.started[text, default: 0] } }
    /// How often the cancel action of a handler started with `text` ran.
    func cancelled(_ text: String) -> Int { state.withLock { $0.cancelled[text, default: 0] } }
    /// Handler starts of any text.
    var totalStarts: Int { state.withLock { $0.started.values.reduce(0, +) } }
    /// The responder a `held:<name>` call left for the test to answer.
    func held(_ name: String) -> CallResponder? { state.withLock { $0.held[name] } }
    /// Every interceptor run, in order.
    var gateRuns: [(gate: String, inTask: Bool, onLoop: Bool)] { state.withLock { $0.gateRuns } }
}

/// Guards admin methods by `x-api-key: let-me-in`, without suspending.
private struct ImmediateKeyGate: ImmediateServerInterceptor {
    let probe: CallbackProbe
    let group: EventLoopGroup

    func applies(to method: MethodInfo) -> Bool { method.auth == .admin }

    func prepareImmediately(_ context: inout ServerContext) throws {
        probe.gateRan("key", inTask: withUnsafeCurrentTask { $0 != nil }, onLoop: group.indexOfCurrentLoop() != nil)
        guard context.metadata[MetadataKey.apiKey] == "let-me-in" else {
            throw RPCError(code: .unauthenticated, reason: "MISSING_API_KEY", message: "Say the word.")
        }
        context.attributes[GateHolderKey.self] = "admin"
    }
}

/// Guards user methods by an `x-user` header, suspending first as a real token check might.
private struct SuspendingUserGate: ServerInterceptor {
    let probe: CallbackProbe
    let group: EventLoopGroup

    func applies(to method: MethodInfo) -> Bool { method.auth == .user }

    func prepare(_ context: inout ServerContext) async throws {
        probe.gateRan("user", inTask: withUnsafeCurrentTask { $0 != nil }, onLoop: group.indexOfCurrentLoop() != nil)
        await Task.yield()
        guard let user = context.metadata["x-user"] else {
            throw RPCError(code: .unauthenticated, reason: "NO_USER", message: "Who are you?")
        }
        context.attributes[GateHolderKey.self] = "user:\(user)"
    }
}

/// One test's server of ``CallbackContract`` on a single loop of its own, and a client of it.
struct CallbackFixture: Sendable {
    let server: HTTP2Server
    let client: RPCClient
    let port: Int
    let probe: CallbackProbe

    /// A further client of the server; the caller closes it.
    func makeClient() throws -> RPCClient { try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: port)) }
}

extension LiveTests {
    /// Unary methods registered with `registerCallback`: started on the loop thread with no task
    /// when the request is small and every interceptor that applies is immediate, answered
    /// later from any thread; else bridged through a task. Cancellation reaches the handler
    /// through its responder either way.
    @Suite("Callback unary handlers")
    struct CallbackHandlerTests {
        /// The loop group's name: its one thread is "callback-0".
        static let loopName = "callback"

        // MARK: Fixture

        /// The handler of the test methods. By the request's text:
        /// - `now…`: answers before returning;
        /// - `queue…`: answers 10 ms later from a dispatch queue;
        /// - `detached…`: answers from a detached task after a 20 ms sleep;
        /// - `fail:CODE:REASON:MESSAGE`: answers that error from a dispatch queue; `crash` a plain error;
        /// - `twice`: answers from two threads at once, different texts;
        /// - `held:NAME`: leaves its responder in the probe for the test to answer;
        /// - anything else (`hang`): answers only when cancelled, or by itself after 10 s.
        /// The answer reports where the handler started, not where it answered.
        static func answer(_ data: Data, context: ServerContext, responder: CallResponder, probe: CallbackProbe, group: EventLoopGroup) {
            let request: TextMessage
            do {
                request = try JSONCodec.shared.decode(TextMessage.self, from: data)
            } catch {
                return responder.respond(.failure(error))
            }
            let text = request.text
            let sighting = HandlerSighting(
                text: text, onLoop: group.indexOfCurrentLoop() != nil, inTask: withUnsafeCurrentTask { $0 != nil },
                thread: Thread.current.name ?? "", requestID: context.requestID,
                keyHolder: context.attributes[GateHolderKey.self] ?? "")
            let success: @Sendable (String) -> Result<Data, any Error> = { text in
                var reply = sighting
                reply.text = text
                return Result { try JSONCodec.shared.encode(reply) }
            }
            // Every cancellation is recorded; answering then is up to each case.
            let key = text.hasPrefix("held:") ? text : (text.count > 40 ? String(text.prefix(40)) : text)
            probe.start(key)
            if text.hasPrefix("now") {
                responder.respond(success(text))
            } else if text.hasPrefix("queue") {
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(10)) { responder.respond(success(text)) }
            } else if text.hasPrefix("detached") {
                Task.detached {
                    try? await Task.sleep(for: .milliseconds(20))
                    responder.respond(success(text))
                }
            } else if text.hasPrefix("fail:") {
                let parts = text.split(separator: ":", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
                let error =
                    if parts.count == 4, let code = RPCCode(name: parts[1]) {
                        RPCError(code: code, reason: parts[2], message: parts[3])
                    } else {
                        RPCError(code: .invalidArgument, reason: "BAD_FIXTURE", message: "fail:CODE:REASON:MESSAGE")
                    }
                DispatchQueue.global().async { responder.respond(.failure(error)) }
            } else if text == "crash" {
                DispatchQueue.global().async { responder.respond(.failure(CallbackSecret())) }
            } else if text == "twice" {
                DispatchQueue.concurrentPerform(iterations: 2) { index in responder.respond(success("twice-\(index)")) }
            } else if text.hasPrefix("held:") {
                responder.onCancel { probe.cancel(key) }
                probe.hold(String(text.dropFirst("held:".count)), responder)
            } else {
                responder.onCancel {
                    probe.cancel(key)
                    responder.respond(.failure(CancellationError()))
                }
                // A fallback so a cancellation that never arrives fails the test instead of hanging it.
                DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(10)) { responder.respond(success("unanswered")) }
            }
        }

        static func router(probe: CallbackProbe, group: EventLoopGroup, gated: Bool) -> Router {
            var router = Router()
            if gated {
                router.addInterceptor(ImmediateKeyGate(probe: probe, group: group))
                router.addInterceptor(SuspendingUserGate(probe: probe, group: group))
            }
            for method in [CallbackContract.answer, CallbackContract.keyed, CallbackContract.signedIn] {
                router.registerCallback(method.info) { data, context, responder in
                    answer(data, context: context, responder: responder, probe: probe, group: group)
                }
            }
            return router
        }

        /// Starts the fixture server (with both gates when `gated`) and a client, runs `body`,
        /// then closes both, whether `body` returned or threw.
        @discardableResult
        static func withServer<Result>(
            gated: Bool = false, logger: Logger = discardingLogger, configure: (inout ServerConfiguration) -> Void = { _ in },
            _ body: (CallbackFixture) async throws -> Result
        ) async throws -> Result {
            var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
            configure(&configuration)
            let group = try EventLoopGroup(count: 1, name: loopName)
            let probe = CallbackProbe()
            let server = HTTP2Server(
                configuration: configuration, router: router(probe: probe, group: group, gated: gated), logger: logger,
                group: group, ownsGroup: true)
            return try await withStartedServer(server, cannotStart: { await group.shutdown() }) { port, client in
                try await body(CallbackFixture(server: server, client: client, port: port, probe: probe))
            }
        }

        private static func options(_ requestID: String? = nil, timeout: Duration = .seconds(10), _ extra: Metadata = [:]) -> CallOptions {
            var metadata = extra
            if let requestID { metadata.set(MetadataKey.requestID, requestID) }
            return CallOptions(metadata: metadata, timeout: timeout)
        }

        /// Polls until `lines` holds a call line for each of `requestIDs`; records an issue if it never does.
        private static func waitForLines(_ lines: CapturedLogLines, _ requestIDs: [String]) async {
            let arrived = await eventually(within: .seconds(5)) {
                let logged = Set(lines.calls.compactMap { $0.fields["request-id"] })
                return requestIDs.allSatisfy(logged.contains)
            }
            #expect(arrived, "lines: \(lines.calls.map(\.fields))")
        }

        /// The call lines logged for `requestID`.
        private static func lines(_ lines: CapturedLogLines, for requestID: String) -> [[String: String]] {
            lines.calls.map(\.fields).filter { $0["request-id"] == requestID }
        }

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

        // MARK: Cancellation

        @Test("the client cancelling its call runs the handler's cancel action, and the server logs CANCELLED once",
              arguments: [64 * 1024, 0])
        func clientCancellation(inlineStartLimit: Int) async throws {
            let lines = CapturedLogLines()
            try await Self.withServer(logger: lines.logger, configure: { $0.inlineStartLimit = inlineStartLimit }) { fixture in
                let client = fixture.client
                let call = Task {
                    try await client.unary(CallbackContract.answer, TextMessage(text: "hang"), options: Self.options("cb-cancel"))
                }
                let started = await eventually(within: .seconds(5)) { fixture.probe.started("hang") == 1 }
                try #require(started, "the handler never started")
                #expect(fixture.probe.cancelled("hang") == 0)
                let (result, elapsed) = await timed {
                    call.cancel()
                    return await call.result
                }
                switch result {
                case .success(let answer): Issue.record("the cancelled call succeeded with \(answer)")
                case .failure(let error as RPCError): #expect(error.code == .cancelled, "got \(error)")
                case .failure(let error): #expect(error is CancellationError, "got \(type(of: error)): \(error)")
                }
                #expect(elapsed < .seconds(2), "the cancelled call took \(elapsed)")
                let cancelled = await eventually(within: .seconds(3)) { fixture.probe.cancelled("hang") == 1 }
                #expect(cancelled, "the handler's cancel action never ran")
                await Self.waitForLines(lines, ["cb-cancel"])
                #expect(Self.lines(lines, for: "cb-cancel").map { $0["status"] } == ["CANCELLED"])
                // The connection still serves.
                let after = try await client.unary(CallbackContract.answer, TextMessage(text: "now"), options: Self.options())
                #expect(after.text == "now")
                #expect(fixture.probe.cancelled("hang") == 1)
            }
        }

        @Test("a short client deadline on a handler that never answers: DEADLINE_EXCEEDED at the deadline, and the cancel action runs",
              arguments: [64 * 1024, 0])
        func deadline(inlineStartLimit: Int) async throws {
            let lines = CapturedLogLines()
            try await Self.withServer(logger: lines.logger, configure: { $0.inlineStartLimit = inlineStartLimit }) { fixture in
                let (_, elapsed) = await timed {
                    await expectRPCError(.deadlineExceeded) {
                        try await fixture.client.unary(
                            CallbackContract.answer, TextMessage(text: "hang"), options: Self.options("cb-deadline", timeout: .milliseconds(300)))
                    }
                }
                #expect(elapsed < .seconds(3), "a 300 ms deadline took \(elapsed)")
                #expect(fixture.probe.started("hang") == 1)
                let cancelled = await eventually(within: .seconds(3)) { fixture.probe.cancelled("hang") == 1 }
                #expect(cancelled, "the handler's cancel action never ran")
                await Self.waitForLines(lines, ["cb-deadline"])
                // The server's timer or the client's reset, whichever came first, ended it.
                let statuses = Self.lines(lines, for: "cb-deadline").map { $0["status"] ?? "" }
                #expect(statuses == ["DEADLINE_EXCEEDED"] || statuses == ["CANCELLED"], "statuses: \(statuses)")
            }
        }

        @Test("the server enforces grpc-timeout by itself on a callback call: the cancel action runs and the call is answered")
        func serverEnforcesTimeout() async throws {
            try await Self.withServer { fixture in
                // A raw client that sends grpc-timeout but keeps no timer of its own.
                let socket = try RawSocket(port: fixture.port)
                var bytes = HTTP2Bytes.preface + HTTP2Bytes.frame(type: HTTP2Bytes.settings)
                bytes += HTTP2Bytes.frame(
                    type: HTTP2Bytes.headers, flags: HTTP2Bytes.endHeaders, stream: 1,
                    payload: HTTP2Bytes.requestBlock(path: CallbackContract.answer.path, extra: [("grpc-timeout", "300m")]))
                bytes += HTTP2Bytes.frame(
                    type: HTTP2Bytes.data, flags: HTTP2Bytes.endStream, stream: 1,
                    payload: MessageFraming.frame(Data(#"{"text":"hang"}"#.utf8)))
                socket.send(bytes)
                let cancelled = await eventually(within: .seconds(5)) { fixture.probe.cancelled("hang") == 1 }
                let (received, _) = await socket.readUntilClosed(timeout: .milliseconds(500))
                socket.close()
                #expect(cancelled, "the handler was not cancelled at the 300 ms grpc-timeout")
                let frames = HTTP2Bytes.parseFrames(received)
                #expect(
                    frames.contains { $0.type == HTTP2Bytes.headers && $0.stream == 1 && $0.flags & HTTP2Bytes.endStream != 0 },
                    "no final HEADERS on stream 1; frames: \(frames)")
            }
        }

        @Test("the client's connection closing cancels the handler's responder", arguments: [64 * 1024, 0])
        func connectionClose(inlineStartLimit: Int) async throws {
            let lines = CapturedLogLines()
            try await Self.withServer(logger: lines.logger, configure: { $0.inlineStartLimit = inlineStartLimit }) { fixture in
                let other = try fixture.makeClient()
                let call = Task {
                    try await other.unary(CallbackContract.answer, TextMessage(text: "hang"), options: Self.options("cb-close"))
                }
                let started = await eventually(within: .seconds(5)) { fixture.probe.started("hang") == 1 }
                try #require(started, "the handler never started")
                await other.close()
                let cancelled = await eventually(within: .seconds(3)) { fixture.probe.cancelled("hang") == 1 }
                #expect(cancelled, "the handler's cancel action never ran")
                if case .success(let answer) = await call.result { Issue.record("the call succeeded with \(answer)") }
                await Self.waitForLines(lines, ["cb-close"])
                #expect(Self.lines(lines, for: "cb-close").map { $0["status"] } == ["CANCELLED"])
            }
        }

        // MARK: Interceptors

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

        // MARK: Shutdown

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

        // MARK: Logging

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
}
