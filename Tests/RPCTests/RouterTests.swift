import Foundation
import Logging
import RPC
import Synchronization
import Testing
import JSON

/// A request of the test service.
private struct EchoRequest: RPCMessage, Equatable {
    var text: String
    var repeats: Int?
    static let fields = [FieldDescriptor("text", "String"), FieldDescriptor("repeats", "Int", optional: true)]
}

/// A response of the test service.
private struct EchoResponse: RPCMessage, Equatable {
    var text: String
    static let fields = [FieldDescriptor("text", "String")]
}

private enum Echo {
    static let service = "test.echo.v1.EchoService"
    static let unary = MethodDescriptor<EchoRequest, EchoResponse>(service: service, method: "Say", kind: .unary)
    static let expand = MethodDescriptor<EchoRequest, EchoResponse>(
        service: service, method: "Expand", kind: .serverStreaming)
    static let collect = MethodDescriptor<EchoRequest, EchoResponse>(
        service: service, method: "Collect", kind: .clientStreaming)
    static let chat = MethodDescriptor<EchoRequest, EchoResponse>(
        service: service, method: "Chat", kind: .bidirectionalStreaming, auth: .user, idempotent: true)
}

/// The authenticated user an interceptor attaches.
private enum UserKey: AttributeKey {
    typealias Value = String
}

/// Counts how often a handler ran; shared between a test and its handler.
private final class Counter: Sendable {
    // Mutex makes the count safe to bump from the handler's task.
    private let value = Mutex(0)
    func increment() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}

/// Records the order in which interceptors ran.
private final class Trail: Sendable {
    private let names = Mutex<[String]>([])
    func append(_ name: String) { names.withLock { $0.append(name) } }
    var all: [String] { names.withLock { $0 } }
}

private struct RecordingInterceptor: ServerInterceptor {
    let name: String
    let trail: Trail
    func prepare(_ context: inout ServerContext) async throws {
        trail.append(name)
    }
}

private struct AuthInterceptor: ServerInterceptor {
    let trail: Trail
    func prepare(_ context: inout ServerContext) async throws {
        trail.append("auth")
        guard let header = context.metadata[MetadataKey.authorization], header.hasPrefix("Bearer ") else {
            throw RPCError(code: .unauthenticated, reason: "MISSING_TOKEN", message: "Sign in first.")
        }
        context.attributes[UserKey.self] = String(header.dropFirst("Bearer ".count))
    }
}

@Suite("Router")
struct RouterTests {
    private static func context(for info: MethodInfo, metadata: Metadata = Metadata()) -> ServerContext {
        ServerContext(
            method: info, metadata: metadata, deadline: nil, requestID: "req-1", peer: "127.0.0.1:5000",
            logger: Logger(label: "RouterTests"))
    }

    /// Serves one call in-process, as a transport would: interceptors, then the handler.
    private static func serve(
        _ router: Router, _ path: String, io: FakeServerCallIO, metadata: Metadata = Metadata()
    ) async throws {
        let method = try #require(router.method(forPath: path))
        var context = Self.context(for: method.info, metadata: metadata)
        try await router.prepare(&context)
        try await method.handler(io, context)
    }

    private static func json(_ request: EchoRequest) throws -> Data {
        try JSONCodec.shared.encode(request)
    }

    private static func unaryRouter(counter: Counter) -> Router {
        var router = Router()
        router.unary(Echo.unary) { request, _ in
            counter.increment()
            return EchoResponse(text: request.text.uppercased())
        }
        return router
    }

    @Test("a unary call with one message gets one response")
    func unaryOneMessage() async throws {
        let counter = Counter()
        let io = FakeServerCallIO(requests: [try Self.json(EchoRequest(text: "hello"))])
        try await Self.serve(Self.unaryRouter(counter: counter), Echo.unary.path, io: io)
        #expect(try await io.decodedResponses(as: EchoResponse.self) == [EchoResponse(text: "HELLO")])
        #expect(counter.count == 1)
    }

    @Test("a unary call with no message is UNIMPLEMENTED and the handler does not run")
    func unaryNoMessage() async throws {
        let counter = Counter()
        let io = FakeServerCallIO(requests: [])
        let error = try await #require(throws: RPCError.self) {
            try await Self.serve(Self.unaryRouter(counter: counter), Echo.unary.path, io: io)
        }
        #expect(error.code == .unimplemented)
        #expect(counter.count == 0)
        #expect(await io.responses.isEmpty)
    }

    @Test("a unary call with two messages is UNIMPLEMENTED and the handler does not run")
    func unaryTwoMessages() async throws {
        let counter = Counter()
        let io = FakeServerCallIO(json: [#"{"text":"a"}"#, #"{"text":"b"}"#])
        let error = try await #require(throws: RPCError.self) {
            try await Self.serve(Self.unaryRouter(counter: counter), Echo.unary.path, io: io)
        }
        #expect(error.code == .unimplemented)
        #expect(counter.count == 0)
        #expect(await io.responses.isEmpty)
    }

    @Test("a unary call with malformed JSON is MALFORMED_MESSAGE", arguments: ["{", "", "{\"text\":5}", "{}"])
    func unaryMalformed(json: String) async throws {
        let counter = Counter()
        let io = FakeServerCallIO(json: [json])
        let error = try await #require(throws: RPCError.self) {
            try await Self.serve(Self.unaryRouter(counter: counter), Echo.unary.path, io: io)
        }
        #expect(error.code == .invalidArgument)
        #expect(error.reason == "MALFORMED_MESSAGE")
        #expect(counter.count == 0)
    }

    @Test("an error thrown by a unary handler reaches the caller unchanged and nothing is written")
    func unaryHandlerError() async throws {
        var router = Router()
        router.unary(Echo.unary) { request, _ in
            throw RPCError(code: .notFound, reason: "NO_ECHO", message: "Nothing for \(request.text).")
        }
        let io = FakeServerCallIO(json: [#"{"text":"x"}"#])
        let error = try await #require(throws: RPCError.self) { try await Self.serve(router, Echo.unary.path, io: io) }
        #expect(error.code == .notFound)
        #expect(error.reason == "NO_ECHO")
        #expect(await io.responses.isEmpty)
    }

    @Test("a server-streaming call writes every response, in order", arguments: [0, 1, 5])
    func serverStreaming(repeats: Int) async throws {
        var router = Router()
        router.serverStreaming(Echo.expand) { request, writer, _ in
            for index in 0..<(request.repeats ?? 1) {
                try await writer.write(EchoResponse(text: "\(request.text) \(index)"))
            }
        }
        let io = FakeServerCallIO(requests: [try Self.json(EchoRequest(text: "hi", repeats: repeats))])
        try await Self.serve(router, Echo.expand.path, io: io)
        let responses = try await io.decodedResponses(as: EchoResponse.self)
        #expect(responses == (0..<repeats).map { EchoResponse(text: "hi \($0)") })
    }

    @Test("a server-streaming call also requires exactly one request", arguments: [0, 2])
    func serverStreamingCardinality(count: Int) async throws {
        var router = Router()
        router.serverStreaming(Echo.expand) { _, writer, _ in try await writer.write(EchoResponse(text: "x")) }
        let io = FakeServerCallIO(json: Array(repeating: #"{"text":"a"}"#, count: count))
        let error = try await #require(throws: RPCError.self) { try await Self.serve(router, Echo.expand.path, io: io) }
        #expect(error.code == .unimplemented)
        #expect(await io.responses.isEmpty)
    }

    @Test("a client-streaming call reads every request and answers once", arguments: [0, 1, 4])
    func clientStreaming(count: Int) async throws {
        var router = Router()
        router.clientStreaming(Echo.collect) { requests, _ in
            var texts: [String] = []
            for try await request in requests { texts.append(request.text) }
            return EchoResponse(text: texts.joined(separator: ","))
        }
        let texts = (0..<count).map { "m\($0)" }
        let io = FakeServerCallIO(requests: try texts.map { try Self.json(EchoRequest(text: $0)) })
        try await Self.serve(router, Echo.collect.path, io: io)
        #expect(try await io.decodedResponses(as: EchoResponse.self) == [EchoResponse(text: texts.joined(separator: ","))])
    }

    @Test("a malformed message in a request stream is MALFORMED_MESSAGE")
    func clientStreamingMalformed() async throws {
        var router = Router()
        router.clientStreaming(Echo.collect) { requests, _ in
            var count = 0
            for try await _ in requests { count += 1 }
            return EchoResponse(text: "\(count)")
        }
        let io = FakeServerCallIO(json: [#"{"text":"ok"}"#, #"{"text":["no"]}"#])
        let error = try await #require(throws: RPCError.self) { try await Self.serve(router, Echo.collect.path, io: io) }
        #expect(error.reason == "MALFORMED_MESSAGE")
        #expect(error.details?["fieldViolations"]?.arrayValue?.first?["field"]?.stringValue == "text")
    }

    @Test("a bidirectional call echoes each request before reading the next")
    func bidirectional() async throws {
        var router = Router()
        router.bidirectional(Echo.chat) { requests, writer, _ in
            for try await request in requests { try await writer.write(EchoResponse(text: "echo " + request.text)) }
        }
        let io = FakeServerCallIO(json: [#"{"text":"a"}"#, #"{"text":"b"}"#, #"{"text":"c"}"#])
        try await Self.serve(router, Echo.chat.path, io: io)
        let responses = try await io.decodedResponses(as: EchoResponse.self)
        #expect(responses.map(\.text) == ["echo a", "echo b", "echo c"])
        let kinds = await io.events.map { event -> String in
            switch event {
            case .read(let data): data == nil ? "end" : "read"
            case .write: "write"
            }
        }
        #expect(kinds == ["read", "write", "read", "write", "read", "write", "end"])
    }

    @Test("registered methods are listed in registration order with their descriptions")
    func registeredMethodsInOrder() throws {
        var router = Router()
        router.bidirectional(Echo.chat) { _, _, _ in }
        router.unary(Echo.unary) { request, _ in EchoResponse(text: request.text) }
        router.clientStreaming(Echo.collect) { _, _ in EchoResponse(text: "") }
        router.serverStreaming(Echo.expand) { _, _, _ in }
        #expect(
            router.registeredMethods.map(\.path) == [
                "/test.echo.v1.EchoService/Chat", "/test.echo.v1.EchoService/Say",
                "/test.echo.v1.EchoService/Collect", "/test.echo.v1.EchoService/Expand",
            ])
        #expect(router.registeredMethods.map(\.kind) == [.bidirectionalStreaming, .unary, .clientStreaming, .serverStreaming])
        let chat = try #require(router.method(forPath: "/test.echo.v1.EchoService/Chat"))
        #expect(chat.info == Echo.chat.info)
        #expect(chat.info.auth == .user)
        #expect(chat.info.idempotent)
        #expect(chat.info.requestFields == EchoRequest.fields)
        #expect(chat.info.responseFields == EchoResponse.fields)
    }

    @Test("an unknown path has no method", arguments: ["/test.echo.v1.EchoService/Nope", "/other.v1.S/Say", "", "/"])
    func unknownPath(path: String) {
        var router = Router()
        router.unary(Echo.unary) { request, _ in EchoResponse(text: request.text) }
        #expect(router.method(forPath: path) == nil)
    }

    @Test("a raw registration sees the call's I/O and context")
    func rawRegistration() async throws {
        let info = MethodInfo(
            service: "test.raw.v1.Raw", method: "Bytes", kind: .unary, auth: .none, idempotent: false,
            requestFields: [], responseFields: [])
        var router = Router()
        router.register(info) { io, context in
            let message = try await io.nextMessage() ?? Data()
            try await io.write(Data((context.requestID + ":").utf8) + message)
        }
        let io = FakeServerCallIO(requests: [Data("raw".utf8)])
        try await Self.serve(router, "/test.raw.v1.Raw/Bytes", io: io)
        #expect(await io.responses == [Data("req-1:raw".utf8)])
    }

    @Test("interceptors run in the order they were added")
    func interceptorOrder() async throws {
        let trail = Trail()
        var router = Router()
        router.addInterceptor(RecordingInterceptor(name: "first", trail: trail))
        router.addInterceptor(RecordingInterceptor(name: "second", trail: trail))
        router.addInterceptor(RecordingInterceptor(name: "third", trail: trail))
        router.unary(Echo.unary) { request, _ in
            trail.append("handler")
            return EchoResponse(text: request.text)
        }
        try await Self.serve(router, Echo.unary.path, io: FakeServerCallIO(json: [#"{"text":"x"}"#]))
        #expect(trail.all == ["first", "second", "third", "handler"])
    }

    @Test("an interceptor can attach an attribute that the handler reads")
    func interceptorAttribute() async throws {
        let trail = Trail()
        var router = Router()
        router.addInterceptor(AuthInterceptor(trail: trail))
        router.unary(Echo.unary) { request, context in
            EchoResponse(text: "\(context.attributes[UserKey.self] ?? "nobody") says \(request.text)")
        }
        let io = FakeServerCallIO(json: [#"{"text":"hi"}"#])
        try await Self.serve(router, Echo.unary.path, io: io, metadata: ["Authorization": "Bearer user-7"])
        #expect(try await io.decodedResponses(as: EchoResponse.self) == [EchoResponse(text: "user-7 says hi")])
    }

    @Test("a context starts with no attributes")
    func noAttributesByDefault() {
        let context = Self.context(for: Echo.unary.info)
        #expect(context.attributes[UserKey.self] == nil)
        #expect(context.remainingTime == nil)
        #expect(context.contentType == "application/grpc+json")
    }

    @Test("an interceptor that throws rejects the call and later interceptors do not run")
    func interceptorRejects() async throws {
        let trail = Trail()
        var router = Router()
        router.addInterceptor(RecordingInterceptor(name: "log", trail: trail))
        router.addInterceptor(AuthInterceptor(trail: trail))
        router.addInterceptor(RecordingInterceptor(name: "after", trail: trail))
        router.unary(Echo.unary) { request, _ in
            trail.append("handler")
            return EchoResponse(text: request.text)
        }
        var context = Self.context(for: Echo.unary.info)
        let error = try await #require(throws: RPCError.self) { try await router.prepare(&context) }
        #expect(error.code == .unauthenticated)
        #expect(error.reason == "MISSING_TOKEN")
        #expect(trail.all == ["log", "auth"])
        #expect(context.attributes[UserKey.self] == nil)
    }
}
