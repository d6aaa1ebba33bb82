import Foundation
import Logging
import RPC
import RPCHTTP2
import ServiceTestSupport
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
        let attempt: (any ClientCall)?
        let thread: String
        let onClientLoop: Bool
    }

    private let completions = Mutex<[Completion]>([])
    private let group: EventLoopGroup?

    init(group: EventLoopGroup? = nil) { self.group = group }

    /// The completion to hand `startUnary`.
    var completion: @Sendable (Result<Data, RPCError>, (any ClientCall)?) -> Void {
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
    private let state = Mutex<[(error: RPCError, attempt: (any ClientCall)?)]>([])
    private let answer: @Sendable (Int) -> Bool

    /// A veto that answers `answer(n)` to the n-th question (1-based).
    init(_ answer: @escaping @Sendable (Int) -> Bool = { _ in true }) { self.answer = answer }

    var mayRetry: @Sendable (RPCError, (any ClientCall)?) -> Bool {
        { [self] error, attempt in
            let asked = state.withLock { state -> Int in
                state.append((error, attempt))
                return state.count
            }
            return answer(asked)
        }
    }

    var questions: [(error: RPCError, attempt: (any ClientCall)?)] { state.withLock { $0 } }
}

extension LiveTests {
    /// `RPCClient.startUnary`: a unary call of raw bytes without a task, completed exactly
    /// once, retried under the same rules as `withRetries`.
    @Suite("startUnary: unary calls without a task")
    struct StartUnaryLiveTests {
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
        static func makeClient(port: Int, configure: (inout ClientSetup) -> Void = { _ in }) throws -> (RPCClient, EventLoopGroup) {
            var setup = ClientSetup()
            configure(&setup)
            let group = try EventLoopGroup(count: 1, name: "unary")
            let transport = HTTP2ClientTransport(
                target: SocketAddressText(host: "127.0.0.1", port: port), configuration: setup.configuration, group: group, ownsGroup: true)
            return (RPCClient(transport: transport, retry: setup.retry), group)
        }

        /// How a test's client is set up: its transport's configuration (whose settings read as
        /// the setup's own) and its retry policy.
        @dynamicMemberLookup
        struct ClientSetup {
            /// The HTTP/2 transport's configuration.
            var configuration = ClientConfiguration()
            /// The client's retry policy.
            var retry = RetryPolicy()

            /// A setting of ``configuration``.
            subscript<Value>(dynamicMember path: WritableKeyPath<ClientConfiguration, Value>) -> Value {
                get { configuration[keyPath: path] }
                set { configuration[keyPath: path] = newValue }
            }
        }

        /// Starts the fixture server and a client of it (see ``makeClient(port:configure:)``),
        /// runs `body`, then closes both.
        static func withServer<Result>(
            configureServer: (inout ServerConfiguration) -> Void = { _ in },
            configureClient: (inout ClientSetup) -> Void = { _ in },
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
