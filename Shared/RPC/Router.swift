public import Foundation
internal import Synchronization

/// A registered method: its description and the raw handler that serves it.
///
/// A class, immutable: a call holds its route by one reference instead of copying the method's
/// description (strings, field lists) and handler for every request.
public final class RegisteredMethod: Sendable {
    /// The method's description.
    public let info: MethodInfo
    /// Serves one call over the transport's raw call I/O.
    public let handler: @Sendable (any ServerCallIO, ServerContext) async throws -> Void
    /// For unary methods whose handler never suspends: turns the one request message into the
    /// response message synchronously. A transport may call it, instead of starting a task for
    /// ``handler``, when the whole request has arrived and no interceptor applies to the method.
    public let immediateHandler: ImmediateHandler?
    /// For unary methods whose handler answers through a callback (work it hands to others,
    /// such as a call upstream): started synchronously on the transport's thread under the same
    /// conditions as ``immediateHandler``, answering later through a ``CallResponder``.
    public let callbackHandler: CallbackHandler?
    /// The router's interceptors that apply to this method, found when the router was built
    /// rather than asked of every interceptor on every call.
    public let interceptors: InterceptorPlan
    /// Whether the handler reads and writes protobuf as well as JSON (health, for standard
    /// probes): transports refuse `application/grpc+proto` for every other method.
    public let speaksProtobuf: Bool

    /// A unary handler that runs to completion without suspending: request bytes in, response
    /// bytes out, or a thrown error.
    public typealias ImmediateHandler = @Sendable (Data, ServerContext) throws -> Data
    /// A unary handler that starts its work without suspending and answers through the
    /// responder, once, from any thread.
    public typealias CallbackHandler = @Sendable (Data, ServerContext, CallResponder) -> Void

    init(
        info: MethodInfo, handler: @escaping @Sendable (any ServerCallIO, ServerContext) async throws -> Void,
        immediateHandler: ImmediateHandler? = nil, callbackHandler: CallbackHandler? = nil,
        interceptors: InterceptorPlan = InterceptorPlan(), speaksProtobuf: Bool = false
    ) {
        self.info = info
        self.handler = handler
        self.immediateHandler = immediateHandler
        self.callbackHandler = callbackHandler
        self.interceptors = interceptors
        self.speaksProtobuf = speaksProtobuf
    }

    /// This method with another interceptor plan (the router's interceptors changed).
    func with(_ interceptors: InterceptorPlan) -> RegisteredMethod {
        RegisteredMethod(
            info: info, handler: handler, immediateHandler: immediateHandler, callbackHandler: callbackHandler,
            interceptors: interceptors, speaksProtobuf: speaksProtobuf)
    }

    /// This method, marked as speaking protobuf too.
    func speakingProtobuf() -> RegisteredMethod {
        RegisteredMethod(
            info: info, handler: handler, immediateHandler: immediateHandler, callbackHandler: callbackHandler,
            interceptors: interceptors, speaksProtobuf: true)
    }
}

/// The interceptors that apply to one method, in the order they were added.
public struct InterceptorPlan: Sendable {
    /// Every interceptor that applies.
    let all: [any ServerInterceptor]
    /// The same interceptors when every one of them is an ``ImmediateServerInterceptor``
    /// (the call can be prepared without suspending); nil when one of them is not.
    let immediate: [any ImmediateServerInterceptor]?

    /// No interceptor.
    init() {
        all = []
        immediate = []
    }

    /// Those of `interceptors` that apply to `method`.
    init(_ interceptors: [any ServerInterceptor], for method: MethodInfo) {
        all = interceptors.filter { $0.applies(to: method) }
        let immediate = all.compactMap { $0 as? any ImmediateServerInterceptor }
        self.immediate = immediate.count == all.count ? immediate : nil
    }

    /// Whether no interceptor applies: there is nothing to prepare.
    public var isEmpty: Bool { all.isEmpty }

    /// Whether the call can be prepared without suspending (``prepareImmediately(_:)``).
    public var canPrepareImmediately: Bool { immediate != nil }

    /// Runs the interceptors, in order.
    public func prepare(_ context: inout ServerContext) async throws {
        for interceptor in all { try await interceptor.prepare(&context) }
    }

    /// Runs the interceptors synchronously; only when ``canPrepareImmediately`` holds.
    public func prepareImmediately(_ context: inout ServerContext) throws {
        guard let immediate else {
            preconditionFailure("\(context.method.path) has an interceptor that cannot prepare a call without suspending")
        }
        for interceptor in immediate { try interceptor.prepareImmediately(&context) }
    }
}

/// Runs before every handler of a router, e.g. to authenticate the caller and attach the
/// user to the context. Throwing ends the call with that error.
public protocol ServerInterceptor: Sendable {
    /// Inspects or enriches the context of a call about to be served.
    func prepare(_ context: inout ServerContext) async throws

    /// Whether ``prepare(_:)`` has anything to do for calls of `method`. The router skips an
    /// interceptor for the methods it leaves alone, and a method no interceptor applies to may
    /// be served without a task (see ``Router/immediateUnary(_:_:)``). Default: every method.
    func applies(to method: MethodInfo) -> Bool
}

extension ServerInterceptor {
    public func applies(to method: MethodInfo) -> Bool { true }
}

/// An interceptor whose work never suspends (checking a key, counting a rate): calls of
/// immediate and callback methods it applies to can still be served without a task.
public protocol ImmediateServerInterceptor: ServerInterceptor {
    /// ``ServerInterceptor/prepare(_:)``, synchronously.
    func prepareImmediately(_ context: inout ServerContext) throws
}

extension ImmediateServerInterceptor {
    public func prepare(_ context: inout ServerContext) async throws {
        try prepareImmediately(&context)
    }
}

/// Maps `:path` to handlers. Built once at start-up, then read concurrently.
public struct Router: Sendable {
    private var methods: [String: RegisteredMethod] = [:]
    private var order: [String] = []
    private var interceptors: [any ServerInterceptor] = []

    /// An empty router.
    public init() {}

    /// The method registered for `path`, if any.
    public func method(forPath path: String) -> RegisteredMethod? { methods[path] }

    /// Every registered method, in registration order.
    public var registeredMethods: [MethodInfo] { order.compactMap { methods[$0]?.info } }

    /// Adds an interceptor that runs, in order of addition, before every handler.
    public mutating func addInterceptor(_ interceptor: any ServerInterceptor) {
        interceptors.append(interceptor)
        // Methods are immutable (calls share them across threads): each gets a new plan.
        for (path, method) in methods { methods[path] = method.with(InterceptorPlan(interceptors, for: method.info)) }
    }

    /// Registers a raw handler; the typed registrations below are built on it.
    public mutating func register(
        _ info: MethodInfo, handler: @escaping @Sendable (any ServerCallIO, ServerContext) async throws -> Void
    ) {
        add(RegisteredMethod(info: info, handler: handler))
    }

    /// Registers a raw unary handler that never suspends: it may run on the transport's thread
    /// with no task (``RegisteredMethod/immediateHandler``), and runs in a task like any other
    /// handler when it cannot (a request still arriving, an interceptor to run first).
    ///
    /// Only for work that takes microseconds and never blocks — reading memory, encoding an
    /// answer: while it runs, every other connection of that event loop waits.
    public mutating func registerImmediate(_ info: MethodInfo, handler: @escaping RegisteredMethod.ImmediateHandler) {
        precondition(info.kind == .unary, "\(info.path) is not unary")
        add(RegisteredMethod(
            info: info,
            handler: { io, context in try await io.write(try handler(try await Self.singleRawRequest(from: io), context)) },
            immediateHandler: handler))
    }

    /// Registers a raw unary handler that answers through a callback (see
    /// ``RegisteredMethod/callbackHandler``); when it cannot start on the transport's thread it
    /// runs in a task like any other handler, whose cancellation cancels the responder.
    ///
    /// The handler must not block or suspend before returning: it starts work and returns.
    public mutating func registerCallback(_ info: MethodInfo, handler: @escaping RegisteredMethod.CallbackHandler) {
        precondition(info.kind == .unary, "\(info.path) is not unary")
        add(RegisteredMethod(
            info: info,
            handler: { io, context in
                let request = try await Self.singleRawRequest(from: io)
                let responder = PortableMutex<CallResponder?>(nil)
                let response = try await withTaskCancellationHandler {
                    try await withCheckedThrowingContinuation { continuation in
                        let answer = CallResponder { continuation.resume(with: $0) }
                        responder.withLock { $0 = answer }
                        if Task.isCancelled { answer.cancel() }
                        handler(request, context, answer)
                    }
                } onCancel: {
                    responder.withLock { $0 }?.cancel()
                }
                try await io.write(response)
            },
            callbackHandler: handler))
    }

    /// Marks the registered method at `info`'s path as reading and writing protobuf too
    /// (``RegisteredMethod/speaksProtobuf``).
    public mutating func acceptProtobuf(for info: MethodInfo) {
        guard let method = methods[info.path] else { preconditionFailure("\(info.path) is not registered") }
        methods[info.path] = method.speakingProtobuf()
    }

    private mutating func add(_ method: RegisteredMethod) {
        precondition(methods[method.info.path] == nil, "\(method.info.path) is registered twice")
        order.append(method.info.path)
        methods[method.info.path] = method.with(InterceptorPlan(interceptors, for: method.info))
    }

    /// The interceptors that apply to calls of `method`. A registered method carries its own
    /// (``RegisteredMethod/interceptors``); transports use that one.
    public func interceptors(for method: MethodInfo) -> InterceptorPlan {
        methods[method.path]?.interceptors ?? InterceptorPlan(interceptors, for: method)
    }

    /// Runs the interceptors that apply to the call's method (in-process calls, tests).
    public func prepare(_ context: inout ServerContext) async throws {
        try await interceptors(for: context.method).prepare(&context)
    }

    /// Whether every interceptor that applies to `method` is an ``ImmediateServerInterceptor``,
    /// so that ``prepareImmediately(_:)`` can stand in for ``prepare(_:)``.
    public func canPrepareImmediately(_ method: MethodInfo) -> Bool {
        interceptors(for: method).canPrepareImmediately
    }

    /// Runs the interceptors that apply to the call's method, synchronously; only when
    /// ``canPrepareImmediately(_:)`` holds.
    public func prepareImmediately(_ context: inout ServerContext) throws {
        try interceptors(for: context.method).prepareImmediately(&context)
    }

    /// Registers a unary method.
    public mutating func unary<Request, Response>(
        _ method: MethodDescriptor<Request, Response>,
        _ handler: @escaping @Sendable (Request, ServerContext) async throws -> Response
    ) {
        precondition(method.info.kind == .unary, "\(method.path) is not unary")
        register(method.info) { io, context in
            let request = try await Self.singleRequest(Request.self, from: io)
            let response = try await handler(request, context)
            try await io.write(try JSONCodec.shared.encode(response))
        }
    }

    /// Registers a unary method whose handler never suspends (see ``registerImmediate(_:handler:)``):
    /// served on the transport's thread without a task when the request has fully arrived and
    /// no interceptor applies to it.
    public mutating func immediateUnary<Request, Response>(
        _ method: MethodDescriptor<Request, Response>,
        _ handler: @escaping @Sendable (Request, ServerContext) throws -> Response
    ) {
        registerImmediate(method.info) { request, context in
            try JSONCodec.shared.encode(try handler(try JSONCodec.shared.decode(Request.self, from: request), context))
        }
    }

    /// Registers a server-streaming method.
    public mutating func serverStreaming<Request, Response>(
        _ method: MethodDescriptor<Request, Response>,
        _ handler: @escaping @Sendable (Request, ResponseWriter<Response>, ServerContext) async throws -> Void
    ) {
        precondition(method.info.kind == .serverStreaming, "\(method.path) is not server-streaming")
        register(method.info) { io, context in
            let request = try await Self.singleRequest(Request.self, from: io)
            try await handler(request, ResponseWriter(io: io), context)
        }
    }

    /// Registers a client-streaming method.
    public mutating func clientStreaming<Request, Response>(
        _ method: MethodDescriptor<Request, Response>,
        _ handler: @escaping @Sendable (RequestStream<Request>, ServerContext) async throws -> Response
    ) {
        precondition(method.info.kind == .clientStreaming, "\(method.path) is not client-streaming")
        register(method.info) { io, context in
            let response = try await handler(RequestStream(io: io), context)
            try await io.write(try JSONCodec.shared.encode(response))
        }
    }

    /// Registers a bidirectional-streaming method.
    public mutating func bidirectional<Request, Response>(
        _ method: MethodDescriptor<Request, Response>,
        _ handler: @escaping @Sendable (RequestStream<Request>, ResponseWriter<Response>, ServerContext) async throws -> Void
    ) {
        precondition(method.info.kind == .bidirectionalStreaming, "\(method.path) is not bidirectional")
        register(method.info) { io, context in
            try await handler(RequestStream(io: io), ResponseWriter(io: io), context)
        }
    }

    /// Reads exactly one request message; zero or two are `UNIMPLEMENTED`, as gRPC requires
    /// of unary requests.
    static func singleRequest<Request: Decodable>(_ type: Request.Type, from io: any ServerCallIO) async throws -> Request {
        try JSONCodec.shared.decode(Request.self, from: try await singleRawRequest(from: io))
    }

    /// Reads exactly one request message without decoding it (a proxy forwards the bytes);
    /// zero or two are `UNIMPLEMENTED`, as gRPC requires of unary requests.
    public static func singleRawRequest(from io: any ServerCallIO) async throws -> Data {
        guard let data = try await io.nextMessage() else { throw noRequestMessage }
        guard try await io.nextMessage() == nil else { throw extraRequestMessage }
        return data
    }

    /// What a unary request without a message ends with.
    public static let noRequestMessage = RPCError(
        code: .unimplemented, reason: "CARDINALITY_VIOLATION", message: "The call sent no request message.")
    /// What a unary request with more than one message ends with.
    public static let extraRequestMessage = RPCError(
        code: .unimplemented, reason: "CARDINALITY_VIOLATION", message: "The call sent more than one request message.")
}
