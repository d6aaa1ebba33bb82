import Foundation
import Logging
import RPC
import RPCHTTP2
import Synchronization
import Testing

/// The raw unary methods of the startUnary tests.
enum RawUnaryContract {
    static let service = "test.startunary.v1.RawService"

    private static func method(_ name: String, idempotent: Bool = false) -> MethodInfo {
        MethodInfo(
            service: service, method: name, kind: .unary, auth: .none, idempotent: idempotent, requestFields: [],
            responseFields: [])
    }

    /// Answers the request bytes unchanged.
    static let echo = method("Echo")
    /// Answers the call's `x-request-id` and `x-note` as `id|note`.
    static let metadata = method("Metadata")
    /// Answers a message of as many bytes as the request's decimal text says.
    static let sized = method("Sized")
    /// Fails with NOT_FOUND `NO_THING`.
    static let fail = method("Fail")
    /// Answers OK with no message.
    static let none = method("None")
    /// Answers OK with two messages, each as big as the request's decimal text says (or 5 bytes).
    static let two = method("Two")
    /// Idempotent: UNAVAILABLE (Trailers-Only) while the fixture's failures last, then the request.
    static let flakyIdempotent = method("FlakyIdempotent", idempotent: true)
    /// Not idempotent, otherwise as ``flakyIdempotent``.
    static let flaky = method("Flaky")
    /// Idempotent: sends a message (so response headers), then fails UNAVAILABLE.
    static let unavailableAfterHeaders = method("UnavailableAfterHeaders", idempotent: true)
    /// Sleeps 30 s unless cancelled.
    static let hang = method("Hang")
    /// Not idempotent: answers the request after 100 ms.
    static let slow = method("Slow")
}

/// What the server of the startUnary tests saw. Thread-safe.
final class RawUnaryServerState: Sendable {
    /// Failures ``RawUnaryContract/flakyIdempotent`` and ``RawUnaryContract/flaky`` still owe.
    let failuresLeft = Atomic<Int>(0)
    /// Calls per method name.
    private let calls = Mutex<[String: Int]>([:])
    /// Hang handlers that started, and those whose task was cancelled.
    let hangStarted = Counter(), hangCancelled = Counter()

    func called(_ method: MethodInfo) { calls.withLock { $0[method.method, default: 0] += 1 } }
    func calls(_ method: MethodInfo) -> Int { calls.withLock { $0[method.method, default: 0] } }
}

/// Every completion of one `startUnary` call, with where it ran. Thread-safe.
final class UnaryCompletionRecorder: Sendable {
    struct Completion: Sendable {
        let result: Result<Data, RPCError>
        let attempt: ClientCall?
        let thread: String
        let onClientLoop: Bool
    }

    private let completions = Mutex<[Completion]>([])
    private let group: EventLoopGroup?

    init(group: EventLoopGroup? = nil) { self.group = group }

    /// The completion to hand `startUnary`.
    var completion: @Sendable (Result<Data, RPCError>, ClientCall?) -> Void {
        { [self] result, attempt in
            let completion = Completion(
                result: result, attempt: attempt, thread: Thread.current.name ?? "",
                onClientLoop: group?.indexOfCurrentLoop() != nil)
            completions.withLock { $0.append(completion) }
        }
    }

    var all: [Completion] { completions.withLock { $0 } }
    var count: Int { all.count }

    /// The first completion, once it comes (nil when none comes within `timeout`).
    func first(within timeout: Duration = .seconds(10)) async -> Completion? {
        _ = await eventually(within: timeout) { count > 0 }
        return all.first
    }

    /// The first completion's error, recording an issue when it succeeded or never came.
    func error(within timeout: Duration = .seconds(10), sourceLocation: SourceLocation = #_sourceLocation) async -> RPCError? {
        guard let first = await first(within: timeout) else {
            Issue.record("no completion within \(timeout)", sourceLocation: sourceLocation)
            return nil
        }
        switch first.result {
        case .success(let data):
            Issue.record("expected an error, got \(data.count) bytes", sourceLocation: sourceLocation)
            return nil
        case .failure(let error):
            return error
        }
    }

    /// Waits a little, then checks that exactly one completion came.
    func expectExactlyOnce(sourceLocation: SourceLocation = #_sourceLocation) async {
        _ = await eventually(within: .seconds(10)) { count > 0 }
        try? await Task.sleep(for: .milliseconds(150))  // room for a second completion, which must not come
        #expect(count == 1, "completions: \(all.map(\.result))", sourceLocation: sourceLocation)
    }
}

/// What `mayRetry` was told, and what it answers. Thread-safe.
final class UnaryRetryVeto: Sendable {
    private let state = Mutex<[(error: RPCError, attempt: ClientCall?)]>([])
    private let answer: @Sendable (Int) -> Bool

    /// A veto that answers `answer(n)` to the n-th question (1-based).
    init(_ answer: @escaping @Sendable (Int) -> Bool = { _ in true }) { self.answer = answer }

    var mayRetry: @Sendable (RPCError, ClientCall?) -> Bool {
        { [self] error, attempt in
            let asked = state.withLock { state -> Int in
                state.append((error, attempt))
                return state.count
            }
            return answer(asked)
        }
    }

    var questions: [(error: RPCError, attempt: ClientCall?)] { state.withLock { $0 } }
}

extension LiveTests {
    /// `RPCClient.startUnary`: a unary call of raw bytes without a task, completed exactly
    /// once, retried under the same rules as `withRetries`.
    @Suite("startUnary: unary calls without a task")
    struct StartUnaryTests {
        /// Options with a 10 s timeout from now.
        static var options: CallOptions { CallOptions(timeout: .seconds(10)) }

        static func router(state: RawUnaryServerState) -> Router {
            var router = Router()
            router.registerImmediate(RawUnaryContract.echo) { data, _ in
                state.called(RawUnaryContract.echo)
                return data
            }
            router.registerImmediate(RawUnaryContract.metadata) { _, context in
                Data("\(context.requestID)|\(context.metadata["x-note"] ?? "")".utf8)
            }
            router.registerImmediate(RawUnaryContract.sized) { data, _ in
                Data(repeating: 0x61, count: Int(String(decoding: data, as: UTF8.self)) ?? 0)
            }
            router.registerImmediate(RawUnaryContract.fail) { _, _ in
                state.called(RawUnaryContract.fail)
                throw RPCError(code: .notFound, reason: "NO_THING", message: "Nothing here ✓")
            }
            router.register(RawUnaryContract.none) { io, _ in
                _ = try await Router.singleRawRequest(from: io)
            }
            router.register(RawUnaryContract.two) { io, _ in
                let size = Int(String(decoding: try await Router.singleRawRequest(from: io), as: UTF8.self)) ?? 5
                try await io.write(Data(repeating: 0x31, count: size))
                try await io.write(Data(repeating: 0x32, count: size))
            }
            for method in [RawUnaryContract.flakyIdempotent, RawUnaryContract.flaky] {
                router.registerImmediate(method) { data, _ in
                    state.called(method)
                    let owed = state.failuresLeft.subtract(1, ordering: .relaxed).oldValue
                    guard owed <= 0 else { throw RPCError(code: .unavailable, message: "warming up") }
                    return data
                }
            }
            router.register(RawUnaryContract.unavailableAfterHeaders) { io, _ in
                state.called(RawUnaryContract.unavailableAfterHeaders)
                try await io.write(try await Router.singleRawRequest(from: io))
                throw RPCError(code: .unavailable, message: "gone mid-answer")
            }
            router.register(RawUnaryContract.slow) { io, _ in
                let request = try await Router.singleRawRequest(from: io)
                state.called(RawUnaryContract.slow)
                try await Task.sleep(for: .milliseconds(100))
                try await io.write(request)
            }
            router.register(RawUnaryContract.hang) { io, _ in
                _ = try await Router.singleRawRequest(from: io)
                state.hangStarted.add(1)
                do {
                    try await Task.sleep(for: .seconds(30))
                } catch {
                    state.hangCancelled.add(1)
                    throw error
                }
            }
            return router
        }

        /// A client on a loop group named "unary" (its thread "unary-0") that the caller closes.
        static func makeClient(port: Int, configure: (inout ClientConfiguration) -> Void = { _ in }) throws -> (RPCClient, EventLoopGroup) {
            var configuration = ClientConfiguration()
            configure(&configuration)
            let group = try EventLoopGroup(count: 1, name: "unary")
            let client = RPCClient(
                target: SocketAddressText(host: "127.0.0.1", port: port), configuration: configuration, group: group, ownsGroup: true)
            return (client, group)
        }

        /// Starts the fixture server and a client of it (see ``makeClient(port:configure:)``),
        /// runs `body`, then closes both.
        static func withServer<Result>(
            configureServer: (inout ServerConfiguration) -> Void = { _ in },
            configureClient: (inout ClientConfiguration) -> Void = { _ in },
            _ body: (_ client: RPCClient, _ group: EventLoopGroup, _ state: RawUnaryServerState, _ port: Int) async throws -> Result
        ) async throws -> Result {
            let state = RawUnaryServerState()
            var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
            configuration.loopCount = 1
            configureServer(&configuration)
            let server = try HTTP2Server(configuration: configuration, router: router(state: state), logger: quietLogger)
            return try await withStartedServer(server) { port, _ in
                let (client, group) = try makeClient(port: port, configure: configureClient)
                do {
                    let result = try await body(client, group, state, port)
                    await client.close()
                    return result
                } catch {
                    await client.close()
                    throw error
                }
            }
        }

        // MARK: Answers

        @Test("a call succeeds with the one response message, completed once on the client's loop thread")
        func success() async throws {
            try await Self.withServer { client, group, state, _ in
                let recorder = UnaryCompletionRecorder(group: group)
                let request = Data("héllo ✓ \u{0}\u{1}".utf8)
                client.startUnary(RawUnaryContract.echo, request: request, options: Self.options, completion: recorder.completion)
                let completion = try #require(await recorder.first())
                #expect(try completion.result.get() == request)
                #expect(completion.onClientLoop)
                #expect(completion.thread == "unary-0")
                let attempt = try #require(completion.attempt)
                #expect(attempt.serverAnswered)
                #expect(attempt.hasResponseHeaders)
                #expect(attempt.path == RawUnaryContract.echo.path)
                await recorder.expectExactlyOnce()
                #expect(state.calls(RawUnaryContract.echo) == 1)
            }
        }

        @Test("the call's metadata reaches the server")
        func metadata() async throws {
            try await Self.withServer { client, _, _, _ in
                let recorder = UnaryCompletionRecorder()
                let options = CallOptions(metadata: [MetadataKey.requestID: "su-meta-1", "x-note": "noted"], timeout: .seconds(10))
                client.startUnary(RawUnaryContract.metadata, request: Data(), options: options, completion: recorder.completion)
                let completion = try #require(await recorder.first())
                #expect(try completion.result.get() == Data("su-meta-1|noted".utf8))
            }
        }

        @Test("a response message of several megabytes arrives whole", arguments: [0, 100_000, 3 * 1024 * 1024])
        func largeResponse(size: Int) async throws {
            try await Self.withServer { client, _, _, _ in
                let recorder = UnaryCompletionRecorder()
                client.startUnary(RawUnaryContract.sized, request: Data("\(size)".utf8), options: Self.options, completion: recorder.completion)
                let completion = try #require(await recorder.first())
                let data = try completion.result.get()
                #expect(data.count == size)
                #expect(data.allSatisfy { $0 == 0x61 })
            }
        }

        @Test("200 calls started at once from many threads each complete once with their own answer")
        func concurrentCalls() async throws {
            try await Self.withServer { client, _, state, _ in
                let recorders = (0..<200).map { _ in UnaryCompletionRecorder() }
                DispatchQueue.concurrentPerform(iterations: 200) { index in
                    client.startUnary(
                        RawUnaryContract.echo, request: Data("call \(index)".utf8), options: Self.options, completion: recorders[index].completion)
                }
                let done = await eventually(within: .seconds(10)) { recorders.allSatisfy { $0.count > 0 } }
                #expect(done)
                try await Task.sleep(for: .milliseconds(100))
                for (index, recorder) in recorders.enumerated() {
                    #expect(recorder.count == 1, "call \(index)")
                    #expect((try? recorder.all.first?.result.get()) == Data("call \(index)".utf8), "call \(index)")
                }
                #expect(state.calls(RawUnaryContract.echo) == 200)
            }
        }

        @Test("a server error completes the call with its code, reason and message")
        func serverError() async throws {
            try await Self.withServer { client, _, state, _ in
                let recorder = UnaryCompletionRecorder()
                client.startUnary(RawUnaryContract.fail, request: Data("x".utf8), options: Self.options, completion: recorder.completion)
                let error = try #require(await recorder.error())
                #expect(error.code == .notFound)
                #expect(error.reason == "NO_THING")
                #expect(error.message == "Nothing here ✓")
                #expect(recorder.all.first?.attempt?.serverAnswered == true)
                await recorder.expectExactlyOnce()
                #expect(state.calls(RawUnaryContract.fail) == 1)
            }
        }

        @Test("an OK answer with no response message, or with two, is INTERNAL", arguments: [
            (RawUnaryContract.none, "5", "The server sent no response message."),
            (RawUnaryContract.two, "5", "The server sent more than one response message."),
            (RawUnaryContract.two, "\(512 * 1024)", "The server sent more than one response message."),
        ])
        func wrongMessageCount(method: MethodInfo, request: String, message: String) async throws {
            try await Self.withServer { client, _, _, _ in
                let recorder = UnaryCompletionRecorder()
                client.startUnary(method, request: Data(request.utf8), options: CallOptions(timeout: .seconds(5)), completion: recorder.completion)
                let error = try #require(await recorder.error())
                #expect(error.code == .internal, "got \(error)")
                #expect(error.message == message)
                await recorder.expectExactlyOnce()
            }
        }

        @Test("two response messages too big for the stream window together are INTERNAL at once, as on the async path")
        func twoLargeMessages() async throws {
            try await Self.withServer { client, _, _, _ in
                let size = Data("\(1536 * 1024)".utf8)
                // The async path reads the first message, which grants window for the second.
                let asyncError = await expectRPCError(.internal) {
                    try await client.withCall(path: RawUnaryContract.two.path, options: CallOptions(timeout: .seconds(5))) { call in
                        try await call.send(size)
                        call.finishSending()
                        return try await RPCClient.singleRawResponse(from: call)
                    }
                }
                #expect(asyncError?.message == "The server sent more than one response message.")
                // Without a reader the call keeps its window open, so the second message arrives
                // and ends the call (a withheld window would leave it waiting for its deadline).
                let recorder = UnaryCompletionRecorder()
                let (error, elapsed) = await timed {
                    client.startUnary(RawUnaryContract.two, request: size, options: CallOptions(timeout: .seconds(3)), completion: recorder.completion)
                    return await recorder.error()
                }
                #expect(error?.code == .internal, "got \(String(describing: error)) after \(elapsed)")
                #expect(error?.message == "The server sent more than one response message.")
                #expect(elapsed < .seconds(2), "took \(elapsed)")
                await recorder.expectExactlyOnce()
            }
        }

        // MARK: Retries

        @Test("an idempotent call answered UNAVAILABLE before any response header is retried until it succeeds; mayRetry is told each failed attempt")
        func retriesIdempotent() async throws {
            try await Self.withServer { client, _, state, _ in
                state.failuresLeft.store(2, ordering: .relaxed)
                let recorder = UnaryCompletionRecorder()
                let veto = UnaryRetryVeto()
                client.startUnary(
                    RawUnaryContract.flakyIdempotent, request: Data("third time".utf8), options: Self.options, mayRetry: veto.mayRetry,
                    completion: recorder.completion)
                let completion = try #require(await recorder.first())
                #expect(try completion.result.get() == Data("third time".utf8))
                #expect(state.calls(RawUnaryContract.flakyIdempotent) == 3)
                let questions = veto.questions
                #expect(questions.count == 2)
                #expect(questions.allSatisfy { $0.error.code == .unavailable && $0.error.message == "warming up" })
                // Each question names the attempt that failed, a different call each time, and
                // the completion the last one.
                let attempts = questions.compactMap(\.attempt)
                #expect(attempts.count == 2)
                #expect(attempts.allSatisfy { $0.serverAnswered && !$0.hasResponseHeaders })
                let last = try #require(completion.attempt)
                #expect(attempts.count == 2 && attempts[0] !== attempts[1] && !attempts.contains { $0 === last })
                await recorder.expectExactlyOnce()
            }
        }

        @Test("an idempotent call that keeps failing is attempted maxAttempts times")
        func attemptsAreBounded() async throws {
            try await Self.withServer(configureClient: { $0.retry.maxAttempts = 4 }) { client, _, state, _ in
                state.failuresLeft.store(100, ordering: .relaxed)
                let recorder = UnaryCompletionRecorder()
                let veto = UnaryRetryVeto()
                client.startUnary(
                    RawUnaryContract.flakyIdempotent, request: Data("never".utf8), options: Self.options, mayRetry: veto.mayRetry,
                    completion: recorder.completion)
                let error = try #require(await recorder.error())
                #expect(error.code == .unavailable)
                #expect(state.calls(RawUnaryContract.flakyIdempotent) == 4)
                #expect(veto.questions.count == 3)
                await recorder.expectExactlyOnce()
            }
        }

        @Test("a call that is not idempotent is not retried, and mayRetry is not asked")
        func noRetryOfOthers() async throws {
            try await Self.withServer { client, _, state, _ in
                state.failuresLeft.store(1, ordering: .relaxed)
                let recorder = UnaryCompletionRecorder()
                let veto = UnaryRetryVeto()
                client.startUnary(
                    RawUnaryContract.flaky, request: Data("once".utf8), options: Self.options, mayRetry: veto.mayRetry,
                    completion: recorder.completion)
                let error = try #require(await recorder.error())
                #expect(error.code == .unavailable)
                #expect(error.message == "warming up")
                #expect(state.calls(RawUnaryContract.flaky) == 1)
                #expect(veto.questions.isEmpty)
                await recorder.expectExactlyOnce()
            }
        }

        @Test("mayRetry answering false stops the retries: the failed attempt's error completes the call")
        func mayRetryVetoes() async throws {
            try await Self.withServer { client, _, state, _ in
                state.failuresLeft.store(100, ordering: .relaxed)
                let recorder = UnaryCompletionRecorder()
                let veto = UnaryRetryVeto { asked in asked < 2 }  // one retry, then no more
                client.startUnary(
                    RawUnaryContract.flakyIdempotent, request: Data("vetoed".utf8), options: Self.options, mayRetry: veto.mayRetry,
                    completion: recorder.completion)
                let error = try #require(await recorder.error())
                #expect(error.code == .unavailable)
                #expect(state.calls(RawUnaryContract.flakyIdempotent) == 2)
                #expect(veto.questions.count == 2)
                await recorder.expectExactlyOnce()
            }
        }

        @Test("a stream the server refused unprocessed is retried even for a method that is not idempotent")
        func refusedStreamIsRetried() async throws {
            // One stream at a time: calls sent before the client learns the limit are refused.
            try await Self.withServer(configureServer: { $0.limits.maxConcurrentStreams = 1 }) { client, _, state, _ in
                let veto = UnaryRetryVeto()
                let recorders = (0..<3).map { _ in UnaryCompletionRecorder() }
                for (index, recorder) in recorders.enumerated() {
                    client.startUnary(
                        RawUnaryContract.slow, request: Data("slow \(index)".utf8), options: Self.options, mayRetry: veto.mayRetry,
                        completion: recorder.completion)
                }
                let done = await eventually(within: .seconds(10)) { recorders.allSatisfy { $0.count > 0 } }
                try #require(done, "not every call completed")
                for (index, recorder) in recorders.enumerated() {
                    let answer = try recorder.all.first?.result.get()
                    #expect(answer == Data("slow \(index)".utf8))
                }
                #expect(!veto.questions.isEmpty, "no stream was refused")
                #expect(veto.questions.allSatisfy { $0.error.reason == "REFUSED_STREAM" && $0.attempt?.serverAnswered != true })
                #expect(state.calls(RawUnaryContract.slow) == 3)
            }
        }

        @Test("a failure after the response headers is not retried, even for an idempotent method")
        func noRetryAfterHeaders() async throws {
            try await Self.withServer { client, _, state, _ in
                let recorder = UnaryCompletionRecorder()
                let veto = UnaryRetryVeto()
                client.startUnary(
                    RawUnaryContract.unavailableAfterHeaders, request: Data("x".utf8), options: Self.options, mayRetry: veto.mayRetry,
                    completion: recorder.completion)
                let error = try #require(await recorder.error())
                #expect(error.code == .unavailable)
                #expect(error.message == "gone mid-answer")
                #expect(state.calls(RawUnaryContract.unavailableAfterHeaders) == 1)
                #expect(veto.questions.isEmpty)
                #expect(recorder.all.first?.attempt?.hasResponseHeaders == true)
            }
        }

        @Test("a retry that would start after the deadline is not made; without a deadline the same call would be retried")
        func deadlineStopsRetries() async throws {
            // Backoff of up to 11 days: the random delay before a retry practically always
            // ends after a 10 s deadline.
            try await Self.withServer(configureClient: {
                $0.retry.initialBackoff = .seconds(1_000_000)
                $0.retry.maxBackoff = .seconds(1_000_000)
            }) { client, _, state, _ in
                state.failuresLeft.store(100, ordering: .relaxed)
                let recorder = UnaryCompletionRecorder()
                let veto = UnaryRetryVeto()
                let (error, elapsed) = await timed {
                    client.startUnary(
                        RawUnaryContract.flakyIdempotent, request: Data("x".utf8), options: CallOptions(timeout: .seconds(10)),
                        mayRetry: veto.mayRetry, completion: recorder.completion)
                    return await recorder.error()
                }
                #expect(error?.code == .unavailable)
                #expect(elapsed < .seconds(3), "took \(elapsed)")
                #expect(veto.questions.isEmpty)
                #expect(state.calls(RawUnaryContract.flakyIdempotent) == 1)

                // The control: without a deadline a retry is due, so mayRetry is asked (and says no).
                let control = UnaryCompletionRecorder()
                let refusing = UnaryRetryVeto { _ in false }
                client.startUnary(
                    RawUnaryContract.flakyIdempotent, request: Data("x".utf8), options: CallOptions(), mayRetry: refusing.mayRetry,
                    completion: control.completion)
                #expect(await control.error()?.code == .unavailable)
                #expect(refusing.questions.count == 1)
                #expect(state.calls(RawUnaryContract.flakyIdempotent) == 2)
            }
        }

        @Test("an idempotent call to an upstream that is down, then comes up, succeeds on a retry")
        func upstreamComesUp() async throws {
            let port = try deadPort()
            let state = RawUnaryServerState()
            var configuration = ServerConfiguration(host: "127.0.0.1", port: port)
            configuration.loopCount = 1
            let server = try HTTP2Server(configuration: configuration, router: Self.router(state: state), logger: quietLogger)
            let startFailure = Mutex<String?>(nil)
            // The first failed attempt brings the server up; the next attempts find it.
            let veto = UnaryRetryVeto { asked in
                if asked == 1 {
                    do { try server.start() } catch { startFailure.withLock { $0 = "\(error)" } }
                }
                return true
            }
            let (client, _) = try Self.makeClient(port: port) { $0.reconnectInitialBackoff = .milliseconds(1) }
            let recorder = UnaryCompletionRecorder()
            client.startUnary(
                RawUnaryContract.echo.retargeted(idempotent: true), request: Data("came up".utf8), options: Self.options,
                mayRetry: veto.mayRetry, completion: recorder.completion)
            let completion = await recorder.first()
            await client.close()
            await server.shutdown()
            #expect(startFailure.withLock { $0 } == nil)
            let result = try #require(completion?.result)
            #expect(try result.get() == Data("came up".utf8))
            let first = try #require(veto.questions.first)
            #expect(first.error.code == .unavailable)
            #expect(first.attempt?.serverAnswered != true)
            #expect(state.calls(RawUnaryContract.echo) == 1)
        }

        // MARK: Cancellation and deadlines

        @Test("UnaryCallHandle.cancel completes the call with CANCELLED, once, and stops the server's handler")
        func cancel() async throws {
            try await Self.withServer { client, _, state, _ in
                let recorder = UnaryCompletionRecorder()
                let handle = client.startUnary(RawUnaryContract.hang, request: Data("x".utf8), options: Self.options, completion: recorder.completion)
                let started = await eventually(within: .seconds(5)) { state.hangStarted.value == 1 }
                try #require(started, "the handler never started")
                #expect(recorder.count == 0)
                handle.cancel()
                let error = try #require(await recorder.error(within: .seconds(2)))
                #expect(error.code == .cancelled)
                let cancelled = await eventually(within: .seconds(3)) { state.hangCancelled.value == 1 }
                #expect(cancelled, "the server's handler was not cancelled")
                handle.cancel()  // again, after the end: nothing more
                await recorder.expectExactlyOnce()
            }
        }

        @Test("a handle cancelled at once, or after the call completed, completes the call exactly once")
        func cancelEarlyAndLate() async throws {
            try await Self.withServer { client, _, _, _ in
                let early = UnaryCompletionRecorder()
                client.startUnary(RawUnaryContract.hang, request: Data("x".utf8), options: Self.options, completion: early.completion).cancel()
                #expect(await early.error()?.code == .cancelled)
                await early.expectExactlyOnce()

                let late = UnaryCompletionRecorder()
                let handle = client.startUnary(RawUnaryContract.echo, request: Data("done".utf8), options: Self.options, completion: late.completion)
                let done = try await late.first()?.result.get()
                #expect(done == Data("done".utf8))
                handle.cancel()
                await late.expectExactlyOnce()
            }
        }

        @Test("a handle cancelled while a retry is pending completes with CANCELLED, not with the failed attempt's error")
        func cancelBetweenAttempts() async throws {
            try await Self.withServer { client, _, state, _ in
                state.failuresLeft.store(100, ordering: .relaxed)
                let handle = Mutex<UnaryCallHandle?>(nil)
                let veto = UnaryRetryVeto { _ in
                    handle.withLock { $0 }?.cancel()
                    return true
                }
                let recorder = UnaryCompletionRecorder()
                let started = client.startUnary(
                    RawUnaryContract.flakyIdempotent, request: Data("x".utf8), options: Self.options, mayRetry: veto.mayRetry,
                    completion: recorder.completion)
                handle.withLock { $0 = started }
                let error = try #require(await recorder.error(within: .seconds(5)))
                #expect(error.code == .cancelled, "got \(error)")
                #expect(veto.questions.count == 1)
                await recorder.expectExactlyOnce()
            }
        }

        @Test("a handle cancelled while a retry is pending completes at once and makes no further attempt")
        func cancelDuringBackoff() async throws {
            try await Self.withServer(configureClient: {
                $0.retry.initialBackoff = .seconds(1)
                $0.retry.maxBackoff = .seconds(1)
            }) { client, _, state, _ in
                state.failuresLeft.store(100, ordering: .relaxed)
                let veto = UnaryRetryVeto()
                let recorder = UnaryCompletionRecorder()
                let handle = client.startUnary(
                    RawUnaryContract.flakyIdempotent, request: Data("x".utf8), options: Self.options, mayRetry: veto.mayRetry,
                    completion: recorder.completion)
                let failedOnce = await eventually(within: .seconds(5)) { veto.questions.count == 1 }
                try #require(failedOnce, "the first attempt never failed")
                let (error, elapsed) = await timed {
                    handle.cancel()
                    return await recorder.error(within: .seconds(5))
                }
                #expect(error?.code == .cancelled, "got \(String(describing: error))")
                try await Task.sleep(for: .milliseconds(1200))  // past the backoff: room for an attempt, which must not come
                let attempts = state.calls(RawUnaryContract.flakyIdempotent)
                #expect(attempts == 1, "the server served \(attempts) attempts of the cancelled call")
                #expect(elapsed < .milliseconds(500), "the cancelled call completed after \(elapsed)")
                await recorder.expectExactlyOnce()
            }
        }

        @Test("a short deadline on a call the server never answers completes it with DEADLINE_EXCEEDED and stops the handler")
        func deadline() async throws {
            try await Self.withServer { client, _, state, _ in
                let recorder = UnaryCompletionRecorder()
                let (error, elapsed) = await timed {
                    client.startUnary(
                        RawUnaryContract.hang, request: Data("x".utf8), options: CallOptions(timeout: .milliseconds(300)),
                        completion: recorder.completion)
                    return await recorder.error()
                }
                #expect(error?.code == .deadlineExceeded)
                #expect(elapsed < .seconds(3), "a 300 ms deadline took \(elapsed)")
                let cancelled = await eventually(within: .seconds(3)) { state.hangCancelled.value == 1 }
                #expect(cancelled, "the server's handler was not cancelled")
                await recorder.expectExactlyOnce()
            }
        }

        @Test("a deadline already past completes the call at once, on the calling thread, with DEADLINE_EXCEEDED")
        func deadlineAlreadyPast() async throws {
            try await Self.withServer { client, _, state, _ in
                let recorder = UnaryCompletionRecorder()
                client.startUnary(
                    RawUnaryContract.echo, request: Data("x".utf8), options: CallOptions(deadline: ContinuousClock.now - .seconds(1)),
                    completion: recorder.completion)
                // Before startUnary returned.
                #expect(recorder.count == 1)
                #expect(await recorder.error()?.code == .deadlineExceeded)
                #expect(recorder.all.first?.attempt == nil)
                #expect(state.calls(RawUnaryContract.echo) == 0)
            }
        }

        // MARK: No connection

        @Test("a connection that cannot be made completes the call with UNAVAILABLE; during the reconnect backoff at once, on the calling thread")
        func unreachable() async throws {
            let (client, _) = try Self.makeClient(port: try deadPort()) { $0.reconnectInitialBackoff = .seconds(30) }
            let first = UnaryCompletionRecorder()
            client.startUnary(RawUnaryContract.echo, request: Data("x".utf8), options: Self.options, completion: first.completion)
            let error = await first.error()
            #expect(error?.code == .unavailable)
            #expect(first.all.first?.attempt?.serverAnswered != true)
            await first.expectExactlyOnce()

            // The next call meets the backoff: completed before startUnary returns.
            let second = UnaryCompletionRecorder()
            client.startUnary(RawUnaryContract.echo, request: Data("x".utf8), options: Self.options, completion: second.completion)
            #expect(second.count == 1)
            let backoff = await second.error()
            #expect(backoff?.code == .unavailable)
            #expect(backoff?.reason == "UPSTREAM_UNAVAILABLE")
            #expect(second.all.first?.attempt == nil)

            // An idempotent call too: its retries meet the same backoff.
            let idempotent = UnaryCompletionRecorder()
            client.startUnary(
                RawUnaryContract.echo.retargeted(idempotent: true), request: Data("x".utf8), options: Self.options,
                completion: idempotent.completion)
            #expect(await idempotent.error()?.code == .unavailable)
            await idempotent.expectExactlyOnce()
            await client.close()
        }

        @Test("a closed client completes the call at once with UNAVAILABLE")
        func closedClient() async throws {
            try await Self.withServer { client, _, state, _ in
                await client.close()
                let recorder = UnaryCompletionRecorder()
                client.startUnary(RawUnaryContract.echo, request: Data("x".utf8), options: Self.options, completion: recorder.completion)
                #expect(recorder.count == 1)
                #expect(await recorder.error()?.code == .unavailable)
                #expect(state.calls(RawUnaryContract.echo) == 0)
            }
        }
    }
}

extension MethodInfo {
    /// This method with another idempotency (the server routes by path only).
    func retargeted(idempotent: Bool) -> MethodInfo {
        MethodInfo(
            service: service, method: method, kind: kind, auth: auth, idempotent: idempotent, requestFields: requestFields,
            responseFields: responseFields)
    }
}
