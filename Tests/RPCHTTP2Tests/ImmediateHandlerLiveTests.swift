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
    struct ImmediateHandlerLiveTests {
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
            let runs = Counter()
            let prepares = Counter()
            let health = HealthMonitor()
            return try await withOneLoopServer(
                loopName: loopName, logger: logger, configure: configure,
                router: { router(group: $0, runs: runs, prepares: prepares, health: health, gated: gated) }
            ) { server, port, client in
                try await body(ImmediateFixture(server: server, client: client, port: port, runs: runs, prepares: prepares, health: health))
            }
        }

        /// Sends `messages` as raw request messages of a unary call and reads the answer.
        static func rawCall(_ fixture: ImmediateFixture, _ messages: [String]) async throws -> Data? {
            try await fixture.client.withCall(path: ImmediateContract.report.path, options: CallOptions(timeout: .seconds(5))) { call in
                for message in messages { try await call.send(Data(message.utf8)) }
                call.finishSending()
                return try await call.nextMessage()
            }
        }
    }
}
