public import Foundation

/// A registered method: its description and the raw handler that serves it.
///
/// A class, immutable: a call holds its route by one reference instead of copying the method's
/// description (strings, field lists) and handler for every request.
public final class RegisteredMethod: Sendable {
    /// The method's description.
    public let info: MethodInfo
    /// Serves one call over the transport's raw call I/O.
    public let handler: @Sendable (any ServerCallIO, ServerContext) async throws -> Void

    init(info: MethodInfo, handler: @escaping @Sendable (any ServerCallIO, ServerContext) async throws -> Void) {
        self.info = info
        self.handler = handler
    }
}

/// Runs before every handler of a router, e.g. to authenticate the caller and attach the
/// user to the context. Throwing ends the call with that error.
public protocol ServerInterceptor: Sendable {
    /// Inspects or enriches the context of a call about to be served.
    func prepare(_ context: inout ServerContext) async throws
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
    }

    /// Registers a raw handler; the typed registrations below are built on it.
    public mutating func register(
        _ info: MethodInfo, handler: @escaping @Sendable (any ServerCallIO, ServerContext) async throws -> Void
    ) {
        precondition(methods[info.path] == nil, "\(info.path) is registered twice")
        order.append(info.path)
        methods[info.path] = RegisteredMethod(info: info, handler: handler)
    }

    /// Runs the interceptors on a context; the transport calls this before the handler.
    public func prepare(_ context: inout ServerContext) async throws {
        for interceptor in interceptors { try await interceptor.prepare(&context) }
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
        guard let data = try await io.nextMessage() else {
            throw RPCError(code: .unimplemented, reason: "CARDINALITY_VIOLATION", message: "The call sent no request message.")
        }
        guard try await io.nextMessage() == nil else {
            throw RPCError(
                code: .unimplemented, reason: "CARDINALITY_VIOLATION", message: "The call sent more than one request message.")
        }
        return data
    }
}
