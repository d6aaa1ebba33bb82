import Contracts
import Foundation
@testable import gateway
import Logging
import RPC
import RPCHTTP2
import ServiceTestSupport
import Synchronization
import Testing
import JSON

// MARK: Fixture (shared with GRPCWebEdgeTests and CORSPolicyTests)

/// A message with one text field.
struct EdgeNote: RPCMessage, Equatable {
    var text: String?
    static let fields = [FieldDescriptor("text", "String", optional: true)]
}

/// What a handler saw of its call.
struct SeenCall: RPCMessage, Equatable {
    var metadata: [String: String]
    var requestID: String
    /// Milliseconds left before the deadline when the handler ran; nil without one.
    var remainingMilliseconds: Int?
    static let fields: [FieldDescriptor] = []
}

/// What the handlers of ``EdgeFixture`` observed.
final class EdgeProbe: Sendable {
    private let state = Mutex<(started: Int, cancelled: Int, written: Int)>((0, 0, 0))
    var started: Int { state.withLock { $0.started } }
    var cancelled: Int { state.withLock { $0.cancelled } }
    var written: Int { state.withLock { $0.written } }
    /// Whether every handler that started has been cancelled, and `count` did. A call
    /// cancelled before its task ran never starts its handler (under load, a short deadline
    /// can pass first): what matters is that no handler keeps running.
    func allCancelled(atLeast count: Int = 0) -> Bool {
        state.withLock { $0.started == $0.cancelled && $0.cancelled >= count }
    }
    func noteStarted() { state.withLock { $0.started += 1 } }
    func noteCancelled() { state.withLock { $0.cancelled += 1 } }
    func noteWritten() { state.withLock { $0.written += 1 } }
}

/// Requires `x-api-key: k` on `Guarded`, synchronously (the call can still start without a task).
struct EdgeKeyInterceptor: ImmediateServerInterceptor {
    func applies(to method: MethodInfo) -> Bool { method.method == "Guarded" }
    func prepareImmediately(_ context: inout ServerContext) throws {
        guard context.metadata[MetadataKey.apiKey] == "k" else {
            throw RPCError(code: .permissionDenied, reason: "ADMIN_KEY_REQUIRED", message: "Send the key.")
        }
    }
}

/// Suspends before `Slow`: its calls run in a task.
struct EdgeSuspendingInterceptor: ServerInterceptor {
    func applies(to method: MethodInfo) -> Bool { method.method == "Slow" }
    func prepare(_ context: inout ServerContext) async throws { await Task.yield() }
}

/// A router with small handlers of every kind, under a test service and under some of the
/// real catalog and basket paths (for the GET and cache rules, which go by path).
enum EdgeFixture {
    static let service = "test.edge.v1.EdgeService"
    static let say = MethodDescriptor<EdgeNote, EdgeNote>(service: service, method: "Say", kind: .unary)
    static let slow = MethodDescriptor<EdgeNote, EdgeNote>(service: service, method: "Slow", kind: .unary)
    static let guarded = MethodDescriptor<EdgeNote, EdgeNote>(service: service, method: "Guarded", kind: .unary)
    static let seen = MethodDescriptor<EdgeNote, SeenCall>(service: service, method: "GetSeen", kind: .unary, idempotent: true)
    static let fail = MethodDescriptor<EdgeNote, EdgeNote>(service: service, method: "Fail", kind: .unary)
    static let hang = MethodDescriptor<EdgeNote, EdgeNote>(service: service, method: "Hang", kind: .unary)
    static let count = MethodDescriptor<EdgeNote, EdgeNote>(service: service, method: "Count", kind: .serverStreaming)
    static let failStream = MethodDescriptor<EdgeNote, EdgeNote>(service: service, method: "FailStream", kind: .serverStreaming)
    static let watch = MethodDescriptor<EdgeNote, EdgeNote>(service: service, method: "Watch", kind: .serverStreaming)
    static let join = MethodDescriptor<EdgeNote, EdgeNote>(service: service, method: "Join", kind: .clientStreaming)

    /// The error `Fail` ends with.
    static let failure = RPCError(
        code: .alreadyExists, reason: "ALREADY_IN_BASKET", message: "Already in the basket: 100% sure, ünïcode.",
        details: .object(["productId": .number(7), "fieldViolations": .array([.object(["field": .string("id")])])]))

    static func router(_ probe: EdgeProbe = EdgeProbe()) -> Router {
        var router = Router()
        router.addInterceptor(EdgeKeyInterceptor())
        router.addInterceptor(EdgeSuspendingInterceptor())
        router.unary(say) { request, _ in EdgeNote(text: "said " + (request.text ?? "")) }
        router.unary(slow) { request, _ in EdgeNote(text: "slow " + (request.text ?? "")) }
        router.immediateUnary(guarded) { request, _ in request }
        router.immediateUnary(seen) { _, context in
            var metadata: [String: String] = [:]
            for entry in context.metadata { metadata[entry.name] = entry.value }
            let remaining = context.remainingTime.map { Int($0.components.seconds * 1000 + $0.components.attoseconds / 1_000_000_000_000_000) }
            return SeenCall(metadata: metadata, requestID: context.requestID, remainingMilliseconds: remaining)
        }
        router.unary(fail) { _, _ in throw failure }
        router.unary(hang) { request, _ in
            probe.noteStarted()
            do {
                try await Task.sleep(for: .seconds(60))
            } catch {
                probe.noteCancelled()
                throw error
            }
            return request
        }
        router.serverStreaming(count) { request, writer, _ in
            for index in stride(from: 1, through: Int(request.text ?? "") ?? 0, by: 1) {
                try await writer.write(EdgeNote(text: "\(index)"))
                probe.noteWritten()
            }
        }
        router.serverStreaming(failStream) { _, writer, _ in
            try await writer.write(EdgeNote(text: "first"))
            throw failure
        }
        router.serverStreaming(watch) { request, writer, _ in
            probe.noteStarted()
            try await writer.write(EdgeNote(text: request.text))
            do {
                try await Task.sleep(for: .seconds(60))
            } catch {
                probe.noteCancelled()
                throw error
            }
        }
        router.clientStreaming(join) { requests, _ in
            var texts: [String] = []
            for try await request in requests { texts.append(request.text ?? "") }
            return EdgeNote(text: texts.joined(separator: "+"))
        }
        router.registerImmediate(CatalogContract.getProduct.info) { request, _ in Data(#"{"product":{"id":1}}"#.utf8) + request.prefix(0) }
        router.registerImmediate(BasketContract.getBasket.info) { _, _ in Data(#"{"items":[]}"#.utf8) }
        router.registerImmediate(CatalogContract.addFavorite.info) { _, _ in Data("{}".utf8) }
        return router
    }

    static func edge(_ probe: EdgeProbe = EdgeProbe(), defaultTimeout: Duration? = .seconds(10)) -> RPCEdge {
        RPCEdge(router: router(probe), defaultUnaryTimeout: defaultTimeout, logger: Logger(label: "edge-test"))
    }

    /// A POST of `path`.
    static func request(_ path: String, query: String? = nil, headers: [(String, String)] = [], body: Data = Data()) -> WebRequest {
        request("POST", path, query: query, headers: headers, body: body)
    }

    static func request(
        _ method: String, _ path: String, query: String? = nil, headers: [(String, String)] = [], body: Data = Data()
    ) -> WebRequest {
        WebRequest(
            method: method, path: path, query: query, headers: WebHeaders(headers), body: body, peer: "10.1.2.3:5555",
            version: "HTTP/1.1")
    }

    /// Serves `request` and waits for the answer to end.
    static func serve(_ request: WebRequest, edge: RPCEdge = edge(), response: CapturedWebResponse = CapturedWebResponse())
        async throws -> CapturedWebResponse.State
    {
        #expect(edge.serve(request, response: response))
        let state = await response.ended()
        #expect(state.ended, "the answer did not end")
        return state
    }

    static func json(_ data: Data) throws -> JSONValue { try JSONCodec.shared.decode(JSONValue.self, from: data) }

    /// The envelopes of a streamed body: flags and message.
    static func envelopes(_ body: Data) -> [(flags: UInt8, message: Data)] {
        var result: [(UInt8, Data)] = []
        var offset = body.startIndex
        while body.endIndex - offset >= 5 {
            let length = body[(offset + 1)..<(offset + 5)].reduce(0) { $0 << 8 | Int($1) }
            let end = min(offset + 5 + length, body.endIndex)
            result.append((body[offset], Data(body[(offset + 5)..<end])))
            offset = end
        }
        return result
    }
}

// MARK: Connect unary

@Suite("Connect unary calls on the web edge")
struct ConnectEdgeTests {
    let jsonHeaders = [("content-type", "application/json")]

    @Test("a POST with a JSON body is answered 200 with the response message, the request id and a call line")
    func unary() async throws {
        let state = try await EdgeFixture.serve(EdgeFixture.request(
            EdgeFixture.say.path, headers: jsonHeaders + [("connect-protocol-version", "1"), ("x-request-id", "abc-123")],
            body: Data(#"{"text":"hi"}"#.utf8)))
        #expect(state.status == 200)
        #expect(state.headers["content-type"] == "application/json")
        #expect(state.headers["x-request-id"] == "abc-123")
        #expect(try JSONCodec.shared.decode(EdgeNote.self, from: state.body) == EdgeNote(text: "said hi"))
        #expect(state.notedPath == EdgeFixture.say.path)
        #expect(state.notedStatus == nil)
        #expect(state.notedRequestID?.description == "abc-123")
    }

    @Test("handlers served without a task, in a task, and behind a suspending interceptor all answer")
    func everyHandlerKind() async throws {
        let guarded = try await EdgeFixture.serve(EdgeFixture.request(
            EdgeFixture.guarded.path, headers: jsonHeaders + [("x-api-key", "k")], body: Data(#"{"text":"g"}"#.utf8)))
        #expect(guarded.status == 200)
        #expect(try JSONCodec.shared.decode(EdgeNote.self, from: guarded.body).text == "g")
        let slow = try await EdgeFixture.serve(EdgeFixture.request(EdgeFixture.slow.path, headers: jsonHeaders, body: Data(#"{"text":"s"}"#.utf8)))
        #expect(try JSONCodec.shared.decode(EdgeNote.self, from: slow.body).text == "slow s")
    }

    @Test("the router's interceptors run: a refused key is a Connect error with its reason")
    func interceptorsRun() async throws {
        let state = try await EdgeFixture.serve(EdgeFixture.request(EdgeFixture.guarded.path, headers: jsonHeaders, body: Data("{}".utf8)))
        #expect(state.status == 403)
        let error = try EdgeFixture.json(state.body)
        #expect(error["code"] == .string("permission_denied"))
        #expect(state.headers["shop-error-reason"] == "ADMIN_KEY_REQUIRED")
        #expect(state.notedStatus?.code == .permissionDenied)
    }

    @Test("a charset of utf-8 is accepted, any other is 415", arguments: [
        ("application/json; charset=utf-8", 200), ("Application/JSON;charset=\"UTF-8\"", 200), ("application/json; charset=iso-8859-1", 415),
    ])
    func charset(contentType: String, status: Int) async throws {
        let state = try await EdgeFixture.serve(EdgeFixture.request(
            EdgeFixture.say.path, headers: [("content-type", contentType)], body: Data(#"{"text":"x"}"#.utf8)))
        #expect(state.status == status)
    }

    @Test("an empty body is the empty message")
    func emptyBody() async throws {
        let state = try await EdgeFixture.serve(EdgeFixture.request(EdgeFixture.seen.path, headers: jsonHeaders))
        #expect(state.status == 200)
    }

    @Test("an error is a Connect error: code, message, the reason detail with the details, the reason header")
    func error() async throws {
        let state = try await EdgeFixture.serve(EdgeFixture.request(EdgeFixture.fail.path, headers: jsonHeaders, body: Data("{}".utf8)))
        #expect(state.status == 409)
        #expect(state.headers["content-type"] == "application/json")
        #expect(state.headers["shop-error-reason"] == "ALREADY_IN_BASKET")
        let error = try EdgeFixture.json(state.body)
        #expect(error["code"] == .string("already_exists"))
        #expect(error["message"] == .string(EdgeFixture.failure.message))
        let detail = try #require(error["details"]?.arrayValue?.first)
        #expect(detail["type"] == .string("shop.v1.ErrorReason"))
        let debug = try #require(detail["debug"])
        #expect(debug["reason"] == .string("ALREADY_IN_BASKET"))
        #expect(debug["productId"] == .number(7))
        #expect(debug["fieldViolations"]?.arrayValue?.count == 1)
        // value: the detail's JSON bytes, base64 without padding.
        let value = try #require(detail["value"]?.stringValue)
        #expect(!value.hasSuffix("="))
        let padded = value + String(repeating: "=", count: (4 - value.utf8.count % 4) % 4)
        let bytes = try #require(Data(base64Encoded: padded))
        #expect(try EdgeFixture.json(bytes) == debug)
        #expect(state.notedStatus?.reason == "ALREADY_IN_BASKET")
    }

    @Test("every code has the spec's name and HTTP status", arguments: [
        (RPCCode.cancelled, "canceled", 499), (.unknown, "unknown", 500), (.invalidArgument, "invalid_argument", 400),
        (.deadlineExceeded, "deadline_exceeded", 504), (.notFound, "not_found", 404), (.alreadyExists, "already_exists", 409),
        (.permissionDenied, "permission_denied", 403), (.resourceExhausted, "resource_exhausted", 429),
        (.failedPrecondition, "failed_precondition", 400), (.aborted, "aborted", 409), (.outOfRange, "out_of_range", 400),
        (.unimplemented, "unimplemented", 501), (.internal, "internal", 500), (.unavailable, "unavailable", 503),
        (.dataLoss, "data_loss", 500), (.unauthenticated, "unauthenticated", 401),
    ])
    func codes(code: RPCCode, name: String, status: Int) {
        #expect(ConnectError.name(of: code) == name)
        #expect(ConnectError.httpStatus(of: code) == status)
    }

    @Test("an error without reason or details has no details; one with details but no reason keeps them")
    func errorShapes() throws {
        let bare = try EdgeFixture.json(ConnectError.body(RPCError(code: .unavailable, message: "")))
        #expect(bare == .object(["code": .string("unavailable")]))
        let detailed = try EdgeFixture.json(ConnectError.body(RPCError(code: .internal, message: "m", details: .array([.bool(true)]))))
        #expect(detailed["details"]?.arrayValue?.first?["debug"] == .object(["details": .array([.bool(true)])]))
        // Details past the limit are left out; the reason stays.
        let huge = RPCError(
            code: .invalidArgument, reason: "BIG", message: "m",
            details: .object(["blob": .string(String(repeating: "x", count: 10_000))]))
        let limited = try EdgeFixture.json(ConnectError.body(huge))
        #expect(limited["details"]?.arrayValue?.first?["debug"] == .object(["reason": .string("BIG")]))
    }

    @Test("an unknown method is unimplemented with HTTP 404; a path that is no procedure is not served")
    func unknownMethod() async throws {
        let state = try await EdgeFixture.serve(EdgeFixture.request("/test.edge.v1.EdgeService/Nope", headers: jsonHeaders))
        #expect(state.status == 404)
        #expect(try EdgeFixture.json(state.body)["code"] == .string("unimplemented"))
        #expect(state.notedPath == "/test.edge.v1.EdgeService/Nope")
        #expect(state.notedStatus?.code == .unimplemented)
        let edge = EdgeFixture.edge()
        for path in ["/", "/index.html", "/verify-email", "/assets/app.js", "/a.b/c/d", "/a.b/", "//x"] {
            let response = CapturedWebResponse()
            #expect(!edge.serve(EdgeFixture.request("GET", path), response: response), "\(path)")
            #expect(response.captured.status == nil)
        }
    }

    @Test("connect-protocol-version other than 1 is invalid_argument")
    func protocolVersion() async throws {
        let state = try await EdgeFixture.serve(EdgeFixture.request(
            EdgeFixture.say.path, headers: jsonHeaders + [("connect-protocol-version", "2")], body: Data("{}".utf8)))
        #expect(state.status == 400)
        #expect(try EdgeFixture.json(state.body)["code"] == .string("invalid_argument"))
    }

    @Test("connect-timeout-ms is the deadline; without it a unary call gets the default")
    func timeout() async throws {
        let given = try await EdgeFixture.serve(EdgeFixture.request(
            EdgeFixture.seen.path, headers: jsonHeaders + [("connect-timeout-ms", "2500")]))
        let seen = try JSONCodec.shared.decode(SeenCall.self, from: given.body)
        #expect((2000...2500).contains(try #require(seen.remainingMilliseconds)))
        let defaulted = try await EdgeFixture.serve(EdgeFixture.request(EdgeFixture.seen.path, headers: jsonHeaders))
        let remaining = try JSONCodec.shared.decode(SeenCall.self, from: defaulted.body).remainingMilliseconds
        #expect((9000...10_000).contains(try #require(remaining)))
        let none = try await EdgeFixture.serve(
            EdgeFixture.request(EdgeFixture.seen.path, headers: jsonHeaders), edge: EdgeFixture.edge(defaultTimeout: nil))
        #expect(try JSONCodec.shared.decode(SeenCall.self, from: none.body).remainingMilliseconds == nil)
    }

    @Test("a malformed connect-timeout-ms is invalid_argument", arguments: ["abc", "12345678901", "-5", "", "1.5", " 10"])
    func malformedTimeout(value: String) async throws {
        let state = try await EdgeFixture.serve(EdgeFixture.request(
            EdgeFixture.say.path, headers: jsonHeaders + [("connect-timeout-ms", value)], body: Data("{}".utf8)))
        #expect(state.status == 400)
        #expect(state.headers["shop-error-reason"] == "INVALID_TIMEOUT")
    }

    @Test("a call still running at its deadline is answered deadline_exceeded and its handler cancelled")
    func deadlinePasses() async throws {
        let probe = EdgeProbe()
        let started = ContinuousClock.now
        let state = try await EdgeFixture.serve(
            EdgeFixture.request(EdgeFixture.hang.path, headers: jsonHeaders + [("connect-timeout-ms", "50")], body: Data("{}".utf8)),
            edge: EdgeFixture.edge(probe))
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(state.status == 504)
        #expect(try EdgeFixture.json(state.body)["code"] == .string("deadline_exceeded"))
        #expect(state.notedStatus?.code == .deadlineExceeded)
        #expect(await eventually { probe.allCancelled() })
        // A zero timeout has passed already: nothing runs.
        let zero = try await EdgeFixture.serve(EdgeFixture.request(
            EdgeFixture.say.path, headers: jsonHeaders + [("connect-timeout-ms", "0")], body: Data("{}".utf8)))
        #expect(zero.status == 504)
    }

    @Test("a client that goes away cancels the handler; the call is noted cancelled")
    func clientGoesAway() async throws {
        let probe = EdgeProbe()
        let response = CapturedWebResponse()
        let edge = EdgeFixture.edge(probe)
        #expect(edge.serve(EdgeFixture.request(EdgeFixture.hang.path, headers: jsonHeaders, body: Data("{}".utf8)), response: response))
        #expect(await eventually { probe.started == 1 })
        response.cancel()
        #expect(await eventually { probe.allCancelled(atLeast: 1) })
        let state = await response.ended()
        #expect(state.notedStatus?.code == .cancelled)
    }

    @Test("the headers that are metadata reach the handler; protocol and browser headers do not")
    func metadata() async throws {
        let state = try await EdgeFixture.serve(EdgeFixture.request(
            EdgeFixture.seen.path,
            headers: jsonHeaders + [
                ("authorization", "Bearer t"), ("x-api-key", "key"), ("idempotency-key", "idem-1"), ("x-request-id", "rid-9"),
                ("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"), ("acme-shard", "4"),
                ("connect-protocol-version", "1"), ("connect-timeout-ms", "1000"), ("cookie", "session=secret"),
                ("accept", "*/*"), ("origin", "http://shop.example"), ("sec-fetch-mode", "cors"), ("user-agent", "curl/8"),
                ("connection", "keep-alive"), ("host", "gw"), ("grpc-timeout", "1S"), ("x-grpc-web", "1"),
            ]))
        let seen = try JSONCodec.shared.decode(SeenCall.self, from: state.body)
        #expect(seen.metadata == [
            "authorization": "Bearer t", "x-api-key": "key", "idempotency-key": "idem-1", "x-request-id": "rid-9",
            "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "acme-shard": "4",
        ])
        #expect(seen.requestID == "rid-9")
    }

    @Test("a request id is made up when none or an unacceptable one is sent, and echoed")
    func requestIDs() async throws {
        let none = try await EdgeFixture.serve(EdgeFixture.request(EdgeFixture.seen.path, headers: jsonHeaders))
        let made = try #require(none.headers["x-request-id"])
        #expect(made.utf8.count == 15)
        #expect(try JSONCodec.shared.decode(SeenCall.self, from: none.body).requestID == made)
        let bad = try await EdgeFixture.serve(EdgeFixture.request(EdgeFixture.seen.path, headers: jsonHeaders + [("x-request-id", "has space")]))
        #expect(bad.headers["x-request-id"] != "has space")
        #expect(bad.headers["x-request-id"]?.utf8.count == 15)
    }

    @Test("content types the procedures do not speak are 415 with accept-post", arguments: [
        "text/plain", "application/proto", "application/connect+proto", "application/grpc-web+proto", "application/grpc",
        "application/x-www-form-urlencoded", nil,
    ] as [String?])
    func unsupportedContentType(contentType: String?) async throws {
        let headers = contentType.map { [("content-type", $0)] } ?? []
        let state = try await EdgeFixture.serve(EdgeFixture.request(EdgeFixture.say.path, headers: headers, body: Data("{}".utf8)))
        #expect(state.status == 415)
        #expect(state.headers["accept-post"]?.contains("application/json") == true)
        #expect(state.notedPath == nil)
    }

    @Test("a method other than GET and POST is 405 with allow", arguments: [
        ("PUT", EdgeFixture.say.path, "POST"), ("DELETE", EdgeFixture.say.path, "POST"), ("OPTIONS", EdgeFixture.say.path, "POST"),
        ("HEAD", CatalogContract.getProduct.path, "GET, POST"), ("PATCH", "/test.edge.v1.EdgeService/Nope", "POST"),
    ])
    func wrongMethod(method: String, path: String, allow: String) async throws {
        let state = try await EdgeFixture.serve(EdgeFixture.request(method, path, headers: jsonHeaders))
        #expect(state.status == 405)
        #expect(state.headers["allow"] == allow)
    }

    @Test("a streaming method asked as unary, and a unary one asked as a stream, are 415 naming the right type")
    func kindMismatch() async throws {
        let stream = try await EdgeFixture.serve(EdgeFixture.request(EdgeFixture.count.path, headers: jsonHeaders, body: Data("{}".utf8)))
        #expect(stream.status == 415)
        #expect(String(decoding: stream.body, as: UTF8.self).contains("application/connect+json"))
        let unary = try await EdgeFixture.serve(EdgeFixture.request(
            EdgeFixture.say.path, headers: [("content-type", "application/connect+json")],
            body: ConnectEnvelope.frame(Data("{}".utf8))))
        #expect(unary.status == 415)
        #expect(String(decoding: unary.body, as: UTF8.self).contains("application/json"))
    }

    @Test("a compressed body is unimplemented; identity is fine")
    func contentEncoding() async throws {
        let gzip = try await EdgeFixture.serve(EdgeFixture.request(
            EdgeFixture.say.path, headers: jsonHeaders + [("content-encoding", "gzip")], body: Data([0x1F, 0x8B])))
        #expect(gzip.status == 501)
        #expect(gzip.headers["shop-error-reason"] == "UNSUPPORTED_ENCODING")
        let identity = try await EdgeFixture.serve(EdgeFixture.request(
            EdgeFixture.say.path, headers: jsonHeaders + [("content-encoding", "identity")], body: Data(#"{"text":"i"}"#.utf8)))
        #expect(identity.status == 200)
    }
}

// MARK: Connect GET

@Suite("Connect GET on the web edge")
struct ConnectGetTests {
    let productQuery = "encoding=json&message=%7B%22id%22%3A1%7D&connect=v1"

    @Test("a public catalog read is cacheable for a minute when anonymous, private with a token or key")
    func publicRead() async throws {
        let anonymous = try await EdgeFixture.serve(EdgeFixture.request("GET", CatalogContract.getProduct.path, query: productQuery))
        #expect(anonymous.status == 200)
        #expect(anonymous.body == Data(#"{"product":{"id":1}}"#.utf8))
        #expect(anonymous.headers["cache-control"] == "public, max-age=60")
        #expect(anonymous.headers["vary"]?.contains("authorization") == true)
        for credential in [("authorization", "Bearer t"), ("x-api-key", "k")] {
            let signedIn = try await EdgeFixture.serve(
                EdgeFixture.request("GET", CatalogContract.getProduct.path, query: productQuery, headers: [credential]))
            #expect(signedIn.status == 200)
            #expect(signedIn.headers["cache-control"] == "private, no-store")
        }
    }

    @Test("the message reaches the handler from JSON, URL-safe base64 and standard base64")
    func messageEncodings() async throws {
        let json = try await EdgeFixture.serve(EdgeFixture.request(
            "GET", EdgeFixture.seen.path, query: "message=%7B%22text%22%3A%22a%20b%22%7D&encoding=json"))
        #expect(json.status == 200)
        // {"text":"??>"} has `+` and `/` in standard base64, `-` and `_` in URL-safe.
        let message = Data(#"{"text":"??>"}"#.utf8)
        let standard = message.base64EncodedString()
        #expect(standard.contains("/") || standard.contains("+"))
        let urlSafe = standard.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        for encoded in [urlSafe, standard.replacingOccurrences(of: "=", with: "%3D")] {
            let state = try await EdgeFixture.serve(EdgeFixture.request(
                "GET", EdgeFixture.seen.path, query: "encoding=json&base64=1&message=\(encoded)"))
            #expect(state.status == 200, "\(encoded)")
        }
        let broken = try await EdgeFixture.serve(EdgeFixture.request("GET", EdgeFixture.seen.path, query: "encoding=json&base64=1&message=*"))
        #expect(broken.status == 400)
    }

    @Test("the message is handed over as sent: a bad one is the handler's invalid_argument")
    func messageDecoded() async throws {
        let state = try await EdgeFixture.serve(EdgeFixture.request("GET", EdgeFixture.seen.path, query: "encoding=json&message=%7Bnot"))
        #expect(state.status == 400)
        #expect(state.headers["shop-error-reason"] == "MALFORMED_MESSAGE")
    }

    @Test("a read that is not public is private; a missing message is the empty one")
    func privateRead() async throws {
        let basket = try await EdgeFixture.serve(EdgeFixture.request("GET", BasketContract.getBasket.path, query: "encoding=json"))
        #expect(basket.status == 200)
        #expect(basket.headers["cache-control"] == "private, no-store")
    }

    @Test("GET is refused (405) for methods with side effects, even idempotent ones", arguments: [
        CatalogContract.addFavorite.path, EdgeFixture.say.path, EdgeFixture.count.path,
    ])
    func sideEffects(path: String) async throws {
        let state = try await EdgeFixture.serve(EdgeFixture.request("GET", path, query: "encoding=json&message=%7B%7D"))
        #expect(state.status == 405)
        #expect(state.headers["allow"] == "POST")
    }

    @Test("which methods count as free of side effects", arguments: [
        (CatalogContract.getProduct.info, true), (CatalogContract.listProducts.info, true), (CatalogContract.listCategories.info, true),
        (CatalogContract.batchGetProducts.info, true), (StorefrontContract.getHome.info, true), (StorefrontContract.getProductPage.info, true),
        (BasketContract.getBasket.info, true), (OrderContract.listOrders.info, true), (AuthContract.getCurrentUser.info, true),
        (CatalogContract.addFavorite.info, false), (CatalogContract.removeFavorite.info, false), (BasketContract.addItem.info, false),
        (OrderContract.placeOrder.info, false), (BasketContract.watchBasket.info, false), (AuthContract.signIn.info, false),
    ])
    func sideEffectFree(method: MethodInfo, allowed: Bool) {
        #expect(ConnectUnary.allowsGet(method) == allowed)
    }

    @Test("unsupported query values are refused", arguments: [
        ("encoding=proto&message=x", 415, nil), ("encoding=json&message=%7B%7D&compression=gzip", 501, "UNSUPPORTED_ENCODING"),
        ("encoding=json&message=%7B%7D&connect=v2", 400, "UNSUPPORTED_PROTOCOL_VERSION"),
    ] as [(String, Int, String?)])
    func refusedQueries(query: String, status: Int, reason: String?) async throws {
        let state = try await EdgeFixture.serve(EdgeFixture.request("GET", CatalogContract.getProduct.path, query: query))
        #expect(state.status == status)
        #expect(state.headers["shop-error-reason"] == reason)
        if status != 415 { #expect(state.headers["cache-control"] == "private, no-store") }
    }

    @Test("an error answer to a public read is not cacheable; an unknown method is 404")
    func errors() async throws {
        let timeout = try await EdgeFixture.serve(EdgeFixture.request(
            "GET", CatalogContract.getProduct.path, query: productQuery, headers: [("connect-timeout-ms", "x")]))
        #expect(timeout.status == 400)
        #expect(timeout.headers["cache-control"] == "private, no-store")
        let unknown = try await EdgeFixture.serve(EdgeFixture.request("GET", "/shop.catalog.v1.CatalogService/Nope", query: productQuery))
        #expect(unknown.status == 404)
        #expect(unknown.headers["cache-control"] == "private, no-store")
    }
}

// MARK: Connect streaming

@Suite("Connect streaming calls on the web edge")
struct ConnectStreamingEdgeTests {
    let streamHeaders = [("content-type", "application/connect+json")]

    func enveloped(_ messages: String...) -> Data {
        messages.reduce(into: Data()) { $0.append(ConnectEnvelope.frame(Data($1.utf8))) }
    }

    @Test("a server stream answers 200 with one envelope per message as written, then end-of-stream {}")
    func serverStream() async throws {
        let state = try await EdgeFixture.serve(EdgeFixture.request(
            EdgeFixture.count.path, headers: streamHeaders + [("x-request-id", "s-1")], body: enveloped(#"{"text":"3"}"#)))
        #expect(state.status == 200)
        #expect(state.streamed)
        #expect(state.headers["content-type"] == "application/connect+json")
        #expect(state.headers["x-request-id"] == "s-1")
        #expect(state.parts.count == 4)
        let envelopes = EdgeFixture.envelopes(state.body)
        #expect(envelopes.map(\.flags) == [0, 0, 0, 2])
        #expect(try envelopes.prefix(3).map { try JSONCodec.shared.decode(EdgeNote.self, from: $0.message).text } == ["1", "2", "3"])
        #expect(envelopes.last?.message == Data("{}".utf8))
        #expect(state.notedPath == EdgeFixture.count.path)
        #expect(state.notedStatus == nil)
    }

    @Test("a stream's error is in the end-of-stream message, with the reason as metadata")
    func streamError() async throws {
        let state = try await EdgeFixture.serve(EdgeFixture.request(EdgeFixture.failStream.path, headers: streamHeaders, body: enveloped("{}")))
        #expect(state.status == 200)
        let envelopes = EdgeFixture.envelopes(state.body)
        #expect(envelopes.map(\.flags) == [0, 2])
        let end = try EdgeFixture.json(envelopes[1].message)
        #expect(end["error"]?["code"] == .string("already_exists"))
        #expect(end["error"]?["details"]?.arrayValue?.first?["debug"]?["reason"] == .string("ALREADY_IN_BASKET"))
        #expect(end["metadata"]?["shop-error-reason"] == .array([.string("ALREADY_IN_BASKET")]))
        #expect(state.notedStatus?.code == .alreadyExists)
    }

    @Test("a client stream takes every envelope and answers one message and end-of-stream")
    func clientStream() async throws {
        let state = try await EdgeFixture.serve(EdgeFixture.request(
            EdgeFixture.join.path, headers: streamHeaders, body: enveloped(#"{"text":"a"}"#, #"{"text":"b"}"#, #"{"text":"c"}"#)))
        let envelopes = EdgeFixture.envelopes(state.body)
        #expect(envelopes.map(\.flags) == [0, 2])
        #expect(try JSONCodec.shared.decode(EdgeNote.self, from: envelopes[0].message).text == "a+b+c")
    }

    @Test("malformed envelopes end the stream at once with invalid_argument (or unimplemented for compression)", arguments: [
        (Data([0, 0, 0]), "invalid_argument"), (Data([0, 0, 0, 0, 9, 0x7B]), "invalid_argument"),
        (Data([2, 0, 0, 0, 2, 0x7B, 0x7D]), "invalid_argument"), (Data([0x80, 0, 0, 0, 0]), "invalid_argument"),
        (Data([1, 0, 0, 0, 2, 0x7B, 0x7D]), "unimplemented"), (Data([0, 0xFF, 0xFF, 0xFF, 0xFF]), "invalid_argument"),
    ])
    func malformedEnvelopes(body: Data, code: String) async throws {
        let state = try await EdgeFixture.serve(EdgeFixture.request(EdgeFixture.count.path, headers: streamHeaders, body: body))
        #expect(state.status == 200)
        let envelopes = EdgeFixture.envelopes(state.body)
        #expect(envelopes.map(\.flags) == [2])
        #expect(try EdgeFixture.json(envelopes[0].message)["error"]?["code"] == .string(code))
    }

    @Test("a server stream takes exactly one message; a client stream at most the limit", arguments: [
        (EdgeFixture.count.path, 0, "unimplemented", "CARDINALITY_VIOLATION"),
        (EdgeFixture.count.path, 2, "unimplemented", "CARDINALITY_VIOLATION"),
        (EdgeFixture.join.path, ConnectEnvelope.maximumMessageCount + 1, "resource_exhausted", "TOO_MANY_MESSAGES"),
    ])
    func messageCounts(path: String, count: Int, code: String, reason: String) async throws {
        let body = Data(repeating: 0, count: count * 5)  // empty envelopes
        let state = try await EdgeFixture.serve(EdgeFixture.request(path, headers: streamHeaders, body: body))
        let end = try EdgeFixture.json(try #require(EdgeFixture.envelopes(state.body).last).message)
        #expect(end["error"]?["code"] == .string(code))
        #expect(end["metadata"]?["shop-error-reason"] == .array([.string(reason)]))
    }

    @Test("an unknown method, a bad version, a bad timeout and compression end the stream with their errors", arguments: [
        ("/test.edge.v1.EdgeService/Nope", [], "unimplemented"),
        (EdgeFixture.count.path, [("connect-protocol-version", "7")], "invalid_argument"),
        (EdgeFixture.count.path, [("connect-timeout-ms", "soon")], "invalid_argument"),
        (EdgeFixture.count.path, [("connect-content-encoding", "gzip")], "unimplemented"),
    ] as [(String, [(String, String)], String)])
    func refusals(path: String, headers: [(String, String)], code: String) async throws {
        let state = try await EdgeFixture.serve(EdgeFixture.request(path, headers: streamHeaders + headers, body: enveloped("{}")))
        #expect(state.status == 200)
        #expect(state.headers["content-type"] == "application/connect+json")
        let envelopes = EdgeFixture.envelopes(state.body)
        #expect(try EdgeFixture.json(try #require(envelopes.last).message)["error"]?["code"] == .string(code))
        #expect(state.notedStatus != nil)
    }

    @Test("the client going away cancels a watch; its deadline ends it with deadline_exceeded")
    func cancellationAndDeadline() async throws {
        let probe = EdgeProbe()
        let edge = EdgeFixture.edge(probe)
        let response = CapturedWebResponse()
        #expect(edge.serve(EdgeFixture.request(EdgeFixture.watch.path, headers: streamHeaders, body: enveloped(#"{"text":"w"}"#)), response: response))
        #expect(await eventually { response.captured.parts.count == 1 })
        #expect(response.captured.ended == false)
        response.cancel()
        #expect(await eventually { probe.allCancelled(atLeast: 1) })
        let cancelled = await response.ended()
        #expect(cancelled.notedStatus?.code == .cancelled)

        let timed = try await EdgeFixture.serve(
            EdgeFixture.request(EdgeFixture.watch.path, headers: streamHeaders + [("connect-timeout-ms", "60")], body: enveloped(#"{"text":"w"}"#)),
            edge: edge)
        // The watch's first message comes unless the deadline passed before its handler ran.
        let envelopes = EdgeFixture.envelopes(timed.body)
        #expect(envelopes.map(\.flags) == [0, 2] || envelopes.map(\.flags) == [2])
        #expect(try EdgeFixture.json(try #require(envelopes.last).message)["error"]?["code"] == .string("deadline_exceeded"))
        #expect(timed.notedStatus?.code == .deadlineExceeded)
        #expect(await eventually { probe.allCancelled(atLeast: 1) })
    }

    @Test("a stream waits for the client to take each message (backpressure)")
    func backpressure() async throws {
        let probe = EdgeProbe()
        let response = GatedWebResponse()
        #expect(EdgeFixture.edge(probe).serve(
            EdgeFixture.request(EdgeFixture.count.path, headers: streamHeaders, body: enveloped(#"{"text":"3"}"#)), response: response))
        #expect(await eventually { response.waiting == 1 })
        try await Task.sleep(for: .milliseconds(50))
        #expect(probe.written == 0)  // the first write has not returned
        response.release(4)
        #expect(await eventually { response.ended })
        #expect(probe.written == 3)
    }
}

/// A response whose writes wait until the test releases them, as a client that does not read.
final class GatedWebResponse: WebResponse {
    private struct State {
        var waiters: [CheckedContinuation<Void, Never>] = []
        var permits = 0
        var ended = false
    }

    private let state = Mutex(State())

    var waiting: Int { state.withLock { $0.waiters.count } }
    var ended: Bool { state.withLock { $0.ended } }

    /// Lets `count` writes through.
    func release(_ count: Int) {
        let resumed = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.permits += count
            let ready = Array(state.waiters.prefix(state.permits))
            state.waiters.removeFirst(ready.count)
            state.permits -= ready.count
            return ready
        }
        for waiter in resumed { waiter.resume() }
    }

    func send(status: Int, headers: WebHeaders, body: Data) { state.withLock { $0.ended = true } }
    func start(status: Int, headers: WebHeaders) {}
    /// The calls answered through this response have no deadline.
    func setDeadline(_ deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) {}
    func write(_ bytes: Data) async throws {
        await withCheckedContinuation { continuation in
            let pass = state.withLock { state -> Bool in
                if state.permits > 0 {
                    state.permits -= 1
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if pass { continuation.resume() }
        }
    }
    func end() { state.withLock { $0.ended = true } }
    func onCancel(_ action: @escaping @Sendable () -> Void) {}
    var isCancelled: Bool { false }
    func noteCall(path: String, status: RPCError?, requestID: RequestID?) {}
}

