import Contracts
import Foundation
import Logging
import RPC
import RPCHTTP2
import ServiceKit
import ServiceTestSupport
import Synchronization
import Testing

/// The methods of the callback-handler tests.
enum CallbackContract {
    static let service = "test.callback.v1.CallbackService"
    /// A callback handler that reports where it started and answers as its text says (see
    /// ``LiveTests/CallbackHandlerLiveTests/answer(_:context:responder:probe:group:)``).
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
    struct CallbackHandlerLiveTests {
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
            let probe = CallbackProbe()
            return try await withOneLoopServer(
                loopName: loopName, logger: logger, configure: configure,
                router: { router(probe: probe, group: $0, gated: gated) }
            ) { server, port, client in
                try await body(CallbackFixture(server: server, client: client, port: port, probe: probe))
            }
        }

        /// Options with `requestID` as the call's x-request-id, `extra` metadata and a timeout from now.
        static func options(_ requestID: String? = nil, timeout: Duration = .seconds(10), _ extra: Metadata = [:]) -> CallOptions {
            var metadata = extra
            if let requestID { metadata.set(MetadataKey.requestID, requestID) }
            return CallOptions(metadata: metadata, timeout: timeout)
        }

        /// Polls until `lines` holds a call line for each of `requestIDs`; records an issue if it never does.
        static func waitForLines(_ lines: CapturedLogLines, _ requestIDs: [String]) async {
            let arrived = await eventually(within: .seconds(5)) {
                let logged = Set(lines.calls.compactMap { $0.fields["request-id"] })
                return requestIDs.allSatisfy(logged.contains)
            }
            #expect(arrived, "lines: \(lines.calls.map(\.fields))")
        }

        /// The call lines logged for `requestID`.
        static func lines(_ lines: CapturedLogLines, for requestID: String) -> [[String: String]] {
            lines.calls.map(\.fields).filter { $0["request-id"] == requestID }
        }
    }
}
