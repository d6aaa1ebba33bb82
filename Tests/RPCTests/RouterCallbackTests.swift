import Foundation
import Logging
import RPC
import ServiceTestSupport
import Synchronization
import Testing

// Callback handlers (`Router.registerCallback`) in-process: no transport, the handlers called as a
// transport would call them. Immediate interceptors: RouterCallbackTests+ImmediateInterceptors.swift.

/// The request and response of the callback test methods.
struct Note: RPCMessage, Equatable {
    var text: String
    static let fields = [FieldDescriptor("text", "String")]
}

/// The methods of the callback and interceptor tests.
enum Notes {
    static let service = "test.callback.v1.NoteService"
    static let callback = MethodInfo(
        service: service, method: "Callback", kind: .unary, auth: .none, idempotent: false, requestFields: [], responseFields: [])
    static let admin = MethodInfo(
        service: service, method: "AdminCallback", kind: .unary, auth: .admin, idempotent: false, requestFields: [],
        responseFields: [])
    static let user = MethodInfo(
        service: service, method: "UserCallback", kind: .unary, auth: .user, idempotent: false, requestFields: [],
        responseFields: [])
    static let plain = MethodDescriptor<Note, Note>(service: service, method: "Plain", kind: .unary)
}

@Suite("Router: callback handlers and immediate interceptors")
struct RouterCallbackTests {
    /// Records what callback handlers and interceptors did, in order. Thread-safe.
    final class Trail: Sendable {
        private let state = Mutex<[String]>([])
        func append(_ entry: String) { state.withLock { $0.append(entry) } }
        var entries: [String] { state.withLock { $0 } }
        func contains(_ entry: String) -> Bool { entries.contains(entry) }
    }

    /// A server context of a call to `info`, as a transport would make it.
    static func context(for info: MethodInfo, requestID: String = "req-cb") -> ServerContext {
        ServerContext(
            method: info, metadata: Metadata(), deadline: nil, requestID: requestID, peer: "127.0.0.1:5000",
            logger: Logger(label: "RouterCallbackTests"))
    }

    /// A router whose `Notes.callback` answers by `text` of the raw request:
    /// - `now`: at once, inside the handler, with `now:<request id>`;
    /// - `later`: from a dispatch queue, 20 ms later, with `later`;
    /// - `fail`: from a dispatch queue with NOT_FOUND `NO_NOTE`; `crash` with a plain error;
    /// - `hang`: only when cancelled (CANCELLED); otherwise, after 5 s, with `too late`.
    private static func router(trail: Trail) -> Router {
        var router = Router()
        router.registerCallback(Notes.callback) { request, context, responder in
            let text = String(decoding: request, as: UTF8.self)
            trail.append("handler(\(text))")
            switch text {
            case "now":
                responder.respond(.success(Data("now:\(context.requestID)".utf8)))
            case "later":
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) {
                    responder.respond(.success(Data("later".utf8)))
                }
            case "fail":
                DispatchQueue.global().async {
                    responder.respond(.failure(RPCError(code: .notFound, reason: "NO_NOTE", message: "No such note.")))
                }
            case "crash":
                DispatchQueue.global().async { responder.respond(.failure(WorkFailure())) }
            default:
                responder.onCancel {
                    trail.append("cancelled")
                    responder.respond(.failure(RPCError(code: .cancelled, message: "stopped")))
                }
                // A fallback so a broken bridge fails the test instead of hanging it.
                DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(5)) {
                    responder.respond(.success(Data("too late".utf8)))
                }
            }
            trail.append("returned(\(text))")
        }
        return router
    }

    // MARK: Registration

    @Test("registerCallback gives a method a callback handler and no immediate handler; other registrations give none")
    func callbackHandlerPresence() throws {
        var router = Self.router(trail: Trail())
        router.registerImmediate(Notes.admin) { data, _ in data }
        router.unary(Notes.plain) { request, _ in request }
        router.register(Notes.user) { _, _ in }
        let callback = try #require(router.method(forPath: Notes.callback.path))
        #expect(callback.callbackHandler != nil)
        #expect(callback.immediateHandler == nil)
        #expect(callback.info == Notes.callback)
        #expect(try #require(router.method(forPath: Notes.admin.path)).callbackHandler == nil)
        #expect(try #require(router.method(forPath: Notes.plain.path)).callbackHandler == nil)
        #expect(try #require(router.method(forPath: Notes.user.path)).callbackHandler == nil)
        #expect(router.registeredMethods.map(\.method) == ["Callback", "AdminCallback", "Plain", "UserCallback"])
    }

    @Test("the callback handler, called as a transport calls it, answers through its responder with the call's context")
    func callbackHandlerDirectly() throws {
        let trail = Trail()
        let callback = try #require(Self.router(trail: trail).method(forPath: Notes.callback.path)?.callbackHandler)
        let log = ResponderLog()
        callback(Data("now".utf8), Self.context(for: Notes.callback, requestID: "req-direct"), log.responder())
        #expect(log.messages == [Data("now:req-direct".utf8)])
        #expect(trail.entries == ["handler(now)", "returned(now)"])
    }

    // MARK: The async handler (the task bridge)

    @Test("the async handler writes the responder's answer, given at once or later from another thread",
          arguments: [("now", "now:req-async"), ("later", "later")])
    func asyncHandlerDeliversTheAnswer(request: String, answer: String) async throws {
        let trail = Trail()
        let method = try #require(Self.router(trail: trail).method(forPath: Notes.callback.path))
        let io = FakeServerCallIO(requests: [Data(request.utf8)])
        try await method.handler(io, Self.context(for: method.info, requestID: "req-async"))
        // One message, then the end of the request, then the one response.
        #expect(await io.events == [.read(Data(request.utf8)), .read(nil), .write(Data(answer.utf8))])
        #expect(trail.entries == ["handler(\(request))", "returned(\(request))"])
    }

    @Test("the async handler throws the responder's error and writes nothing")
    func asyncHandlerThrowsTheError() async throws {
        let method = try #require(Self.router(trail: Trail()).method(forPath: Notes.callback.path))
        let io = FakeServerCallIO(requests: [Data("fail".utf8)])
        let error = try await #require(throws: RPCError.self) { try await method.handler(io, Self.context(for: method.info)) }
        #expect(error.code == .notFound)
        #expect(error.reason == "NO_NOTE")
        #expect(error.message == "No such note.")
        #expect(await io.responses.isEmpty)

        // A plain error comes out as it is (the transport turns it into INTERNAL).
        let crashing = FakeServerCallIO(requests: [Data("crash".utf8)])
        await #expect(throws: WorkFailure()) { try await method.handler(crashing, Self.context(for: method.info)) }
        #expect(await crashing.responses.isEmpty)
    }

    @Test("the async handler refuses zero and two request messages with CARDINALITY_VIOLATION, never running the handler",
          arguments: [0, 2])
    func asyncHandlerCardinality(count: Int) async throws {
        let trail = Trail()
        let method = try #require(Self.router(trail: trail).method(forPath: Notes.callback.path))
        let io = FakeServerCallIO(requests: Array(repeating: Data("now".utf8), count: count))
        let error = try await #require(throws: RPCError.self) { try await method.handler(io, Self.context(for: method.info)) }
        #expect(error.code == .unimplemented)
        #expect(error.reason == "CARDINALITY_VIOLATION")
        #expect(error.message == (count == 0 ? Router.noRequestMessage : Router.extraRequestMessage).message)
        #expect(trail.entries.isEmpty)
        #expect(await io.responses.isEmpty)
    }

    @Test("cancelling the task running the async handler cancels the responder: the handler's onCancel runs and the call ends")
    func taskCancellationCancelsTheResponder() async throws {
        let trail = Trail()
        let method = try #require(Self.router(trail: trail).method(forPath: Notes.callback.path))
        let io = FakeServerCallIO(requests: [Data("hang".utf8)])
        let context = Self.context(for: method.info)
        let task = Task { try await method.handler(io, context) }
        let started = await eventually(every: .milliseconds(5)) { trail.contains("returned(hang)") }
        try #require(started, "the handler never started")
        #expect(!trail.contains("cancelled"))
        task.cancel()
        let result = await task.result
        #expect(trail.contains("cancelled"), "trail: \(trail.entries)")
        switch result {
        case .success: Issue.record("the cancelled call succeeded (its handler answered by itself)")
        case .failure(let error): #expect((error as? RPCError)?.code == .cancelled, "got \(error)")
        }
        #expect(await io.responses.isEmpty)
    }

    @Test("a task cancelled before the handler starts hands it a responder that is already cancelled")
    func alreadyCancelledTask() async throws {
        let seen = Locked<(cancelled: Bool?, actionRan: Bool)>((nil, false))
        var router = Router()
        router.registerCallback(Notes.callback) { _, _, responder in
            seen.value.cancelled = responder.isCancelled
            responder.onCancel { seen.value.actionRan = true }
            responder.respond(.success(Data("answered anyway".utf8)))
        }
        let method = try #require(router.method(forPath: Notes.callback.path))
        let io = FakeServerCallIO(requests: [Data("x".utf8)])
        let context = Self.context(for: method.info)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await method.handler(io, context)
        }
        // The handler answered despite the cancellation: its answer is written.
        try await task.value
        #expect(seen.value.cancelled == true)
        #expect(seen.value.actionRan)
        #expect(await io.responses == [Data("answered anyway".utf8)])
    }
}
