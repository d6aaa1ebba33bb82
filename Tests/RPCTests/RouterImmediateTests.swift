import Foundation
import Logging
import RPC
import Synchronization
import Testing

// Immediate unary handlers (`Router.immediateUnary`, `Router.registerImmediate`) and the
// interceptors' `applies(to:)`, in-process: no transport, the handlers called as a transport
// would call them.

/// The request of the test methods.
private struct ShoutRequest: RPCMessage, Equatable {
    var text: String
    static let fields = [FieldDescriptor("text", "String")]
}

/// The response of the test methods.
private struct ShoutResponse: RPCMessage, Equatable {
    var text: String
    var requestID: String
    static let fields = [FieldDescriptor("text", "String"), FieldDescriptor("requestID", "String")]
}

private enum Shout {
    static let service = "test.immediate.v1.ShoutService"
    static let shout = MethodDescriptor<ShoutRequest, ShoutResponse>(service: service, method: "Shout", kind: .unary)
    static let admin = MethodDescriptor<ShoutRequest, ShoutResponse>(
        service: service, method: "AdminShout", kind: .unary, auth: .admin)
    static let raw = MethodInfo(
        service: service, method: "Raw", kind: .unary, auth: .none, idempotent: false, requestFields: [], responseFields: [])
}

/// A plain Swift error, not an `RPCError`.
private struct ShoutFailure: Error, Equatable {}

/// Counts handler runs and records which methods interceptors were asked about.
private final class ShoutLog: Sendable {
    private let state = Mutex<(runs: Int, trail: [String])>((0, []))
    func ran() { state.withLock { $0.runs += 1 } }
    func append(_ entry: String) { state.withLock { $0.trail.append(entry) } }
    var runs: Int { state.withLock { $0.runs } }
    var trail: [String] { state.withLock { $0.trail } }
}

/// An interceptor that applies to the methods `predicate` picks, recording every question and run.
private struct SelectiveInterceptor: ServerInterceptor {
    let name: String
    let log: ShoutLog
    let predicate: @Sendable (MethodInfo) -> Bool
    var rejects = false

    func applies(to method: MethodInfo) -> Bool { predicate(method) }

    func prepare(_ context: inout ServerContext) async throws {
        log.append("\(name).prepare(\(context.method.method))")
        if rejects { throw RPCError(code: .permissionDenied, reason: "NOT_YOU", message: "\(name) says no.") }
    }
}

/// An interceptor that keeps the default `applies(to:)`.
private struct DefaultInterceptor: ServerInterceptor {
    let log: ShoutLog
    func prepare(_ context: inout ServerContext) async throws { log.append("default.prepare") }
}

@Suite("Router: immediate unary handlers and interceptor applicability")
struct RouterImmediateTests {
    private static func context(for info: MethodInfo, requestID: String = "req-imm") -> ServerContext {
        ServerContext(
            method: info, metadata: Metadata(), deadline: nil, requestID: requestID, peer: "127.0.0.1:5000",
            logger: Logger(label: "RouterImmediateTests"))
    }

    /// A router with `Shout.shout` registered immediate: upper-cases the text; "fail" throws
    /// NOT_FOUND, "crash" a plain error.
    private static func shoutRouter(log: ShoutLog) -> Router {
        var router = Router()
        router.immediateUnary(Shout.shout) { request, context in
            log.ran()
            switch request.text {
            case "fail": throw RPCError(code: .notFound, reason: "NO_SHOUT", message: "Nothing to shout.")
            case "crash": throw ShoutFailure()
            default: return ShoutResponse(text: request.text.uppercased(), requestID: context.requestID)
            }
        }
        return router
    }

    private static func json(_ text: String) -> Data { Data(#"{"text":"\#(text)"}"#.utf8) }

    // MARK: Registration

    @Test("immediateUnary and registerImmediate give a method an immediate handler; unary and register do not")
    func immediateHandlerPresence() throws {
        var router = Self.shoutRouter(log: ShoutLog())
        router.registerImmediate(Shout.raw) { data, _ in data }
        router.unary(Shout.admin) { request, _ in ShoutResponse(text: request.text, requestID: "") }
        let plainRaw = MethodInfo(
            service: Shout.service, method: "PlainRaw", kind: .unary, auth: .none, idempotent: false,
            requestFields: [], responseFields: [])
        router.register(plainRaw) { _, _ in }
        #expect(try #require(router.method(forPath: Shout.shout.path)).immediateHandler != nil)
        #expect(try #require(router.method(forPath: Shout.raw.path)).immediateHandler != nil)
        #expect(try #require(router.method(forPath: Shout.admin.path)).immediateHandler == nil)
        #expect(try #require(router.method(forPath: plainRaw.path)).immediateHandler == nil)
        // Immediate methods are ordinary registrations otherwise: listed in order, described.
        #expect(router.registeredMethods.map(\.method) == ["Shout", "Raw", "AdminShout", "PlainRaw"])
        #expect(router.registeredMethods.first == Shout.shout.info)
        #expect(router.registeredMethods.first?.requestFields == ShoutRequest.fields)
    }

    // MARK: The immediate handler, called directly

    @Test("the immediate handler decodes the JSON request and encodes the JSON response, with the call's context")
    func immediateHandlerCodec() throws {
        let log = ShoutLog()
        let method = try #require(Self.shoutRouter(log: log).method(forPath: Shout.shout.path))
        let immediate = try #require(method.immediateHandler)
        let output = try immediate(Self.json("héllo ✓"), Self.context(for: method.info, requestID: "req-direct"))
        #expect(try JSONCodec.shared.decode(ShoutResponse.self, from: output) == ShoutResponse(text: "HÉLLO ✓", requestID: "req-direct"))
        #expect(output == (try JSONCodec.shared.encode(ShoutResponse(text: "HÉLLO ✓", requestID: "req-direct"))))
        #expect(log.runs == 1)
    }

    @Test("the immediate handler turns malformed JSON into MALFORMED_MESSAGE without running the handler",
          arguments: ["{", "", "not json", #"{"text":5}"#, "{}"])
    func immediateHandlerMalformed(json: String) throws {
        let log = ShoutLog()
        let method = try #require(Self.shoutRouter(log: log).method(forPath: Shout.shout.path))
        let immediate = try #require(method.immediateHandler)
        let error = try #require(throws: RPCError.self) { try immediate(Data(json.utf8), Self.context(for: method.info)) }
        #expect(error.code == .invalidArgument)
        #expect(error.reason == "MALFORMED_MESSAGE")
        #expect(log.runs == 0)
    }

    @Test("errors thrown by the handler come out of the immediate handler unchanged")
    func immediateHandlerErrors() throws {
        let method = try #require(Self.shoutRouter(log: ShoutLog()).method(forPath: Shout.shout.path))
        let immediate = try #require(method.immediateHandler)
        let error = try #require(throws: RPCError.self) { try immediate(Self.json("fail"), Self.context(for: method.info)) }
        #expect(error.code == .notFound)
        #expect(error.reason == "NO_SHOUT")
        #expect(error.message == "Nothing to shout.")
        #expect(throws: ShoutFailure()) { try immediate(Self.json("crash"), Self.context(for: method.info)) }
    }

    // MARK: The async handler of an immediate method (the task path)

    @Test("the async handler of an immediate method writes exactly what the immediate handler returns")
    func asyncHandlerMatchesImmediate() async throws {
        let log = ShoutLog()
        let method = try #require(Self.shoutRouter(log: log).method(forPath: Shout.shout.path))
        let immediate = try #require(method.immediateHandler)
        let context = Self.context(for: method.info, requestID: "req-same")
        let expected = try immediate(Self.json("same"), context)
        let io = FakeServerCallIO(requests: [Self.json("same")])
        try await method.handler(io, context)
        #expect(await io.responses == [expected])
        // One message, then the end of the request, then the one response.
        #expect(await io.events == [.read(Self.json("same")), .read(nil), .write(expected)])
        #expect(log.runs == 2)
    }

    @Test("the async handler of an immediate method refuses zero and two request messages with CARDINALITY_VIOLATION",
          arguments: [0, 2])
    func asyncHandlerCardinality(count: Int) async throws {
        let log = ShoutLog()
        let method = try #require(Self.shoutRouter(log: log).method(forPath: Shout.shout.path))
        let io = FakeServerCallIO(requests: Array(repeating: Self.json("x"), count: count))
        let error = try await #require(throws: RPCError.self) { try await method.handler(io, Self.context(for: method.info)) }
        #expect(error.code == .unimplemented)
        #expect(error.reason == "CARDINALITY_VIOLATION")
        let expected = count == 0 ? Router.noRequestMessage : Router.extraRequestMessage
        #expect(error.message == expected.message)
        #expect(log.runs == 0)
        #expect(await io.responses.isEmpty)
    }

    @Test("the async handler of an immediate method passes on malformed JSON and handler errors, writing nothing")
    func asyncHandlerErrors() async throws {
        let log = ShoutLog()
        let method = try #require(Self.shoutRouter(log: log).method(forPath: Shout.shout.path))
        for (text, code, reason) in [("{", RPCCode.invalidArgument, "MALFORMED_MESSAGE"), (#"{"text":"fail"}"#, .notFound, "NO_SHOUT")] {
            let io = FakeServerCallIO(json: [text])
            let error = try await #require(throws: RPCError.self) { try await method.handler(io, Self.context(for: method.info)) }
            #expect(error.code == code)
            #expect(error.reason == reason)
            #expect(await io.responses.isEmpty)
        }
        let io = FakeServerCallIO(requests: [Self.json("crash")])
        await #expect(throws: ShoutFailure()) { try await method.handler(io, Self.context(for: method.info)) }
        #expect(await io.responses.isEmpty)
        #expect(log.runs == 2)  // "fail" and "crash"; the malformed request never reached the handler
    }

    @Test("registerImmediate passes raw bytes through both handlers, context included")
    func rawImmediate() async throws {
        var router = Router()
        router.registerImmediate(Shout.raw) { data, context in Data((context.requestID + ":").utf8) + data }
        let method = try #require(router.method(forPath: Shout.raw.path))
        let immediate = try #require(method.immediateHandler)
        let context = Self.context(for: method.info, requestID: "req-raw")
        // Not JSON on purpose: a raw method never decodes.
        #expect(try immediate(Data([0x00, 0xFF, 0x7B]), context) == Data("req-raw:".utf8) + Data([0x00, 0xFF, 0x7B]))
        let io = FakeServerCallIO(requests: [Data([0x00, 0xFF, 0x7B])])
        try await method.handler(io, context)
        #expect(await io.responses == [Data("req-raw:".utf8) + Data([0x00, 0xFF, 0x7B])])
        let empty = FakeServerCallIO(requests: [])
        let error = try await #require(throws: RPCError.self) { try await method.handler(empty, context) }
        #expect(error.reason == "CARDINALITY_VIOLATION")
    }

    @Test("the shared cardinality errors are UNIMPLEMENTED CARDINALITY_VIOLATION, and singleRawRequest throws them",
          arguments: [0, 2])
    func sharedCardinalityErrors(count: Int) async throws {
        for error in [Router.noRequestMessage, Router.extraRequestMessage] {
            #expect(error.code == .unimplemented)
            #expect(error.reason == "CARDINALITY_VIOLATION")
        }
        #expect(Router.noRequestMessage.message != Router.extraRequestMessage.message)
        let io = FakeServerCallIO(requests: Array(repeating: Data("m".utf8), count: count))
        let error = try await #require(throws: RPCError.self) { try await Router.singleRawRequest(from: io) }
        #expect(error.message == (count == 0 ? Router.noRequestMessage : Router.extraRequestMessage).message)
    }

    // MARK: applies(to:), prepare and interceptors(for:)

    @Test("an interceptor's applies(to:) is true for every method unless it says otherwise")
    func defaultApplies() {
        let interceptor = DefaultInterceptor(log: ShoutLog())
        for info in [Shout.shout.info, Shout.admin.info, Shout.raw] { #expect(interceptor.applies(to: info)) }
    }

    @Test("prepare runs the interceptors that apply to the call's method and skips the others")
    func prepareSkipsInterceptorsThatDoNotApply() async throws {
        let log = ShoutLog()
        var router = Router()
        router.addInterceptor(SelectiveInterceptor(name: "admin-only", log: log) { $0.auth == .admin })
        router.addInterceptor(DefaultInterceptor(log: log))
        router.addInterceptor(SelectiveInterceptor(name: "never", log: log, predicate: { _ in false }, rejects: true))
        router.addInterceptor(SelectiveInterceptor(name: "always", log: log) { _ in true })

        var plain = Self.context(for: Shout.shout.info)
        try await router.prepare(&plain)
        #expect(log.trail == ["default.prepare", "always.prepare(Shout)"])

        var admin = Self.context(for: Shout.admin.info)
        try await router.prepare(&admin)
        #expect(log.trail.dropFirst(2) == ["admin-only.prepare(AdminShout)", "default.prepare", "always.prepare(AdminShout)"])
    }

    @Test("an interceptor that does not apply cannot reject; one that applies can")
    func skippedInterceptorCannotReject() async throws {
        let log = ShoutLog()
        var router = Router()
        router.addInterceptor(SelectiveInterceptor(name: "gate", log: log, predicate: { $0.auth == .admin }, rejects: true))
        var plain = Self.context(for: Shout.shout.info)
        try await router.prepare(&plain)
        #expect(log.trail.isEmpty)
        var admin = Self.context(for: Shout.admin.info)
        let error = try await #require(throws: RPCError.self) { try await router.prepare(&admin) }
        #expect(error.code == .permissionDenied)
        #expect(error.reason == "NOT_YOU")
        #expect(log.trail == ["gate.prepare(AdminShout)"])
    }

    @Test("interceptors(for:) is empty exactly when no interceptor applies to the method")
    func interceptorsForMethod() {
        let log = ShoutLog()
        var router = Router()
        #expect(router.interceptors(for: Shout.shout.info).isEmpty)  // no interceptors at all
        router.addInterceptor(SelectiveInterceptor(name: "never", log: log) { _ in false })
        #expect(router.interceptors(for: Shout.shout.info).isEmpty)
        router.addInterceptor(SelectiveInterceptor(name: "admin-only", log: log) { $0.auth == .admin })
        #expect(router.interceptors(for: Shout.shout.info).isEmpty)
        #expect(!router.interceptors(for: Shout.admin.info).isEmpty)
        router.addInterceptor(DefaultInterceptor(log: log))
        #expect(!router.interceptors(for: Shout.shout.info).isEmpty)
        #expect(!router.interceptors(for: Shout.raw).isEmpty)
        #expect(log.trail.isEmpty)  // asking never runs an interceptor
    }
}
