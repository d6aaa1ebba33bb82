import Foundation
import Logging
import RPC
import Synchronization
import Testing

// `CallResponder` on its own, and callback handlers (`Router.registerCallback`) and immediate
// interceptors (`Router.canPrepareImmediately`/`prepareImmediately`) in-process: no transport,
// the handlers called as a transport would call them.

/// What a responder delivered, and how often its cancel action ran. Thread-safe.
private final class ResponderLog: Sendable {
    private let state = Mutex<(deliveries: [Result<Data, any Error>], cancelRuns: Int)>(([], 0))

    func delivered(_ result: Result<Data, any Error>) { state.withLock { $0.deliveries.append(result) } }
    func cancelRan() { state.withLock { $0.cancelRuns += 1 } }

    var deliveries: [Result<Data, any Error>] { state.withLock { $0.deliveries } }
    var cancelRuns: Int { state.withLock { $0.cancelRuns } }

    /// The delivered messages (failures as nil).
    var messages: [Data?] { deliveries.map { try? $0.get() } }

    /// A responder that records here.
    func responder() -> CallResponder { CallResponder { self.delivered($0) } }
}

/// A value behind a lock, shareable with escaping closures.
private final class Locked<Value: Sendable>: Sendable {
    private let state: Mutex<Value>
    init(_ value: Value) { state = Mutex(value) }
    var value: Value {
        get { state.withLock { $0 } }
        set { state.withLock { $0 = newValue } }
    }
}

/// A plain Swift error, not an `RPCError`.
private struct WorkFailure: Error, Equatable {}

@Suite("CallResponder")
struct CallResponderTests {
    private static let first = Data("first".utf8)
    private static let second = Data("second".utf8)

    @Test("the first answer is delivered and every later one ignored, whatever their kinds")
    func firstAnswerWins() throws {
        let log = ResponderLog()
        let responder = log.responder()
        #expect(log.deliveries.isEmpty)  // nothing until an answer
        responder.respond(.success(Self.first))
        responder.respond(.success(Self.second))
        responder.respond(.failure(WorkFailure()))
        #expect(log.messages == [Self.first])

        let failing = ResponderLog()
        let other = failing.responder()
        other.respond(.failure(RPCError(code: .notFound, reason: "GONE", message: "gone")))
        other.respond(.success(Self.first))
        #expect(failing.deliveries.count == 1)
        let error = try #require(failing.deliveries.first.flatMap { result -> RPCError? in
            if case .failure(let error) = result { return error as? RPCError }
            return nil
        })
        #expect(error.code == .notFound)
        #expect(error.reason == "GONE")
    }

    @Test("an action registered before the call is cancelled runs on cancel, exactly once")
    func onCancelThenCancel() {
        let log = ResponderLog()
        let responder = log.responder()
        responder.onCancel { log.cancelRan() }
        #expect(log.cancelRuns == 0)
        #expect(!responder.isCancelled)
        responder.cancel()
        #expect(log.cancelRuns == 1)
        #expect(responder.isCancelled)
        responder.cancel()
        responder.cancel()
        #expect(log.cancelRuns == 1)
        #expect(log.deliveries.isEmpty)  // cancelling answers nothing: the handler still does
    }

    @Test("an action registered after the call was cancelled runs at once, before onCancel returns")
    func cancelThenOnCancel() {
        let log = ResponderLog()
        let responder = log.responder()
        responder.cancel()
        #expect(responder.isCancelled)
        responder.onCancel { log.cancelRan() }
        #expect(log.cancelRuns == 1)
        responder.cancel()  // already cancelled: the action does not run again
        #expect(log.cancelRuns == 1)
    }

    @Test("an action never runs once the call is answered, whether registered before or after the answer")
    func noCancelActionAfterAnswer() {
        let before = ResponderLog()
        let answered = before.responder()
        answered.onCancel { before.cancelRan() }
        answered.respond(.success(Self.first))
        answered.cancel()
        #expect(before.cancelRuns == 0)
        #expect(answered.isCancelled)  // the flag is set; only the action is skipped

        let after = ResponderLog()
        let late = after.responder()
        late.respond(.success(Self.first))
        late.cancel()
        late.onCancel { after.cancelRan() }
        #expect(after.cancelRuns == 0)
        #expect(after.messages == [Self.first])
    }

    @Test("cancelling twice runs the action once, and a cancelled handler may still answer, once")
    func cancelTwiceThenAnswer() {
        let log = ResponderLog()
        let responder = log.responder()
        responder.onCancel { log.cancelRan() }
        responder.cancel()
        responder.cancel()
        #expect(log.cancelRuns == 1)
        responder.respond(.failure(CancellationError()))
        responder.respond(.success(Self.first))
        #expect(log.deliveries.count == 1)
        #expect(log.messages == [nil])
    }

    @Test("the cancel action may answer the call from inside itself without deadlocking")
    func answerFromInsideTheCancelAction() {
        for registerFirst in [true, false] {
            let log = ResponderLog()
            let responder = log.responder()
            let action: @Sendable () -> Void = {
                log.cancelRan()
                responder.respond(.failure(CancellationError()))
                responder.onCancel { log.cancelRan() }  // answered by now: never runs
            }
            if registerFirst {
                responder.onCancel(action)
                responder.cancel()
            } else {
                responder.cancel()
                responder.onCancel(action)
            }
            #expect(log.cancelRuns == 1)
            #expect(log.deliveries.count == 1)
            #expect(log.messages == [nil])
        }
    }

    @Test("the deliver closure may cancel its own responder (a transport tearing down) without deadlocking")
    func deliverMayCancel() {
        let log = ResponderLog()
        let box = Locked<CallResponder?>(nil)
        let responder = CallResponder { result in
            log.delivered(result)
            box.value?.cancel()
        }
        box.value = responder
        responder.onCancel { log.cancelRan() }
        responder.respond(.success(Self.first))
        #expect(log.messages == [Self.first])
        #expect(log.cancelRuns == 0)  // answered first: the action was dropped
        #expect(responder.isCancelled)
    }

    @Test("many threads answering and cancelling at once: one delivery, at most one cancel action", arguments: [true, false])
    func concurrentAnswersAndCancels(registerAction: Bool) {
        let count = 500
        let logs = (0..<count).map { _ in ResponderLog() }
        let responders = logs.map { $0.responder() }
        if registerAction {
            for (log, responder) in zip(logs, responders) { responder.onCancel { log.cancelRan() } }
        }
        // Eight racers per responder: four answer (two with messages, two with errors), four cancel.
        DispatchQueue.concurrentPerform(iterations: count * 8) { index in
            let responder = responders[index / 8]
            switch index % 8 {
            case 0, 1: responder.respond(.success(Data("answer \(index % 8)".utf8)))
            case 2, 3: responder.respond(.failure(WorkFailure()))
            default: responder.cancel()
            }
        }
        for (index, log) in logs.enumerated() {
            #expect(log.deliveries.count == 1, "responder \(index) delivered \(log.deliveries.count) times")
            #expect(log.cancelRuns <= (registerAction ? 1 : 0), "responder \(index) ran its action \(log.cancelRuns) times")
            #expect(responders[index].isCancelled)
        }
    }

    @Test("registering an action while another thread cancels: it runs exactly once, whichever comes first")
    func concurrentOnCancelAndCancel() {
        let count = 2000
        let logs = (0..<count).map { _ in ResponderLog() }
        let responders = logs.map { $0.responder() }
        DispatchQueue.concurrentPerform(iterations: count * 2) { index in
            let responder = responders[index / 2]
            if index % 2 == 0 {
                responder.onCancel { logs[index / 2].cancelRan() }
            } else {
                responder.cancel()
            }
        }
        let runs = logs.map(\.cancelRuns)
        #expect(runs.allSatisfy { $0 == 1 }, "actions that did not run exactly once: \(runs.enumerated().filter { $0.element != 1 }.count)")
    }
}

// MARK: - Router: callback handlers and immediate interceptors

/// The request and response of the callback test methods.
private struct Note: RPCMessage, Equatable {
    var text: String
    static let fields = [FieldDescriptor("text", "String")]
}

private enum Notes {
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

/// Records what callback handlers and interceptors did, in order. Thread-safe.
private final class Trail: Sendable {
    private let state = Mutex<[String]>([])
    func append(_ entry: String) { state.withLock { $0.append(entry) } }
    var entries: [String] { state.withLock { $0 } }
    func contains(_ entry: String) -> Bool { entries.contains(entry) }
}

/// What an immediate interceptor attaches to the context.
private enum StampKey: AttributeKey {
    typealias Value = [String]
}

/// An interceptor that never suspends: stamps the context and may reject.
private struct StampInterceptor: ImmediateServerInterceptor {
    let name: String
    let trail: Trail
    let predicate: @Sendable (MethodInfo) -> Bool
    var rejects = false

    func applies(to method: MethodInfo) -> Bool { predicate(method) }

    func prepareImmediately(_ context: inout ServerContext) throws {
        trail.append("\(name)(\(context.method.method))")
        if rejects { throw RPCError(code: .permissionDenied, reason: "STAMPED_OUT", message: "\(name) says no.") }
        context.attributes[StampKey.self] = (context.attributes[StampKey.self] ?? []) + [name]
    }
}

/// An ordinary interceptor that suspends.
private struct SuspendingInterceptor: ServerInterceptor {
    let name: String
    let trail: Trail
    let predicate: @Sendable (MethodInfo) -> Bool

    func applies(to method: MethodInfo) -> Bool { predicate(method) }

    func prepare(_ context: inout ServerContext) async throws {
        await Task.yield()
        trail.append("\(name)(\(context.method.method))")
    }
}

@Suite("Router: callback handlers and immediate interceptors")
struct RouterCallbackTests {
    private static func context(for info: MethodInfo, requestID: String = "req-cb") -> ServerContext {
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
        let started = await poll { trail.contains("returned(hang)") }
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

    // MARK: canPrepareImmediately / prepareImmediately

    @Test("canPrepareImmediately holds unless an ordinary interceptor applies to the method")
    func canPrepareImmediately() {
        let trail = Trail()
        var router = Router()
        for info in [Notes.callback, Notes.admin, Notes.user] { #expect(router.canPrepareImmediately(info)) }
        router.addInterceptor(StampInterceptor(name: "everywhere", trail: trail) { _ in true })
        router.addInterceptor(StampInterceptor(name: "admin", trail: trail) { $0.auth == .admin })
        for info in [Notes.callback, Notes.admin, Notes.user] { #expect(router.canPrepareImmediately(info)) }
        // An ordinary interceptor for user methods: only they lose the immediate path.
        router.addInterceptor(SuspendingInterceptor(name: "user", trail: trail) { $0.auth == .user })
        #expect(router.canPrepareImmediately(Notes.callback))
        #expect(router.canPrepareImmediately(Notes.admin))
        #expect(!router.canPrepareImmediately(Notes.user))
        // One that applies to nothing changes nothing.
        router.addInterceptor(SuspendingInterceptor(name: "never", trail: trail) { _ in false })
        #expect(router.canPrepareImmediately(Notes.callback))
        #expect(!router.canPrepareImmediately(Notes.user))
        #expect(trail.entries.isEmpty)  // asking never runs an interceptor
    }

    @Test("prepareImmediately runs the immediate interceptors that apply, in order, skipping ordinary ones that do not")
    func prepareImmediatelyRunsWhatApplies() throws {
        let trail = Trail()
        var router = Router()
        router.addInterceptor(StampInterceptor(name: "first", trail: trail) { _ in true })
        router.addInterceptor(SuspendingInterceptor(name: "user-only", trail: trail) { $0.auth == .user })
        router.addInterceptor(StampInterceptor(name: "admin-only", trail: trail) { $0.auth == .admin })
        router.addInterceptor(StampInterceptor(name: "last", trail: trail) { _ in true })

        var plain = Self.context(for: Notes.callback)
        try router.prepareImmediately(&plain)
        #expect(plain.attributes[StampKey.self] == ["first", "last"])
        var admin = Self.context(for: Notes.admin)
        try router.prepareImmediately(&admin)
        #expect(admin.attributes[StampKey.self] == ["first", "admin-only", "last"])
        #expect(trail.entries == ["first(Callback)", "last(Callback)", "first(AdminCallback)", "admin-only(AdminCallback)", "last(AdminCallback)"])
    }

    @Test("an immediate interceptor that rejects ends prepareImmediately with its error; later ones do not run")
    func prepareImmediatelyRejects() throws {
        let trail = Trail()
        var router = Router()
        router.addInterceptor(StampInterceptor(name: "gate", trail: trail, predicate: { $0.auth == .admin }, rejects: true))
        router.addInterceptor(StampInterceptor(name: "after", trail: trail) { _ in true })
        var plain = Self.context(for: Notes.callback)
        try router.prepareImmediately(&plain)
        #expect(plain.attributes[StampKey.self] == ["after"])
        var admin = Self.context(for: Notes.admin)
        let error = try #require(throws: RPCError.self) { try router.prepareImmediately(&admin) }
        #expect(error.code == .permissionDenied)
        #expect(error.reason == "STAMPED_OUT")
        #expect(trail.entries == ["after(Callback)", "gate(AdminCallback)"])
    }

    @Test("an immediate interceptor serves the async prepare too, with the same effect")
    func immediateInterceptorThroughAsyncPrepare() async throws {
        let trail = Trail()
        var router = Router()
        router.addInterceptor(StampInterceptor(name: "stamp", trail: trail) { _ in true })
        router.addInterceptor(SuspendingInterceptor(name: "suspending", trail: trail) { $0.auth == .user })
        router.addInterceptor(StampInterceptor(name: "gate", trail: trail, predicate: { $0.auth == .admin }, rejects: true))
        var user = Self.context(for: Notes.user)
        try await router.prepare(&user)
        #expect(user.attributes[StampKey.self] == ["stamp"])
        var admin = Self.context(for: Notes.admin)
        let error = try await #require(throws: RPCError.self) { try await router.prepare(&admin) }
        #expect(error.reason == "STAMPED_OUT")
        #expect(trail.entries == ["stamp(UserCallback)", "suspending(UserCallback)", "stamp(AdminCallback)", "gate(AdminCallback)"])
    }
}

/// Polls `condition` every 5 ms until it holds or `timeout` passes; returns whether it held.
private func poll(within timeout: Duration = .seconds(5), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return true
}
