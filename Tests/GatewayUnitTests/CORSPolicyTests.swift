import Foundation
@testable import gateway
import Logging
import RPC
import RPCHTTP2
import ServiceKit
import ServiceTestSupport
import Testing

/// Cross-origin access on the web edge.
@Suite("CORS on the web edge")
struct CORSPolicyTests {
    let policy = CORSPolicy(origins: ["https://shop.example", "HTTP://Localhost:3000/"])

    func preflight(origin: String?, method: String? = "POST", httpMethod: String = "OPTIONS") -> WebRequest {
        var headers: [(String, String)] = [("access-control-request-headers", "content-type,connect-protocol-version")]
        if let origin { headers.append(("origin", origin)) }
        if let method { headers.append(("access-control-request-method", method)) }
        return EdgeFixture.request(httpMethod, "/shop.catalog.v1.CatalogService/GetProduct", headers: headers)
    }

    @Test("a preflight from an allowed origin gets the origin, methods, headers, max age and vary")
    func allowedPreflight() throws {
        let headers = try #require(policy.preflight(preflight(origin: "https://shop.example")))
        #expect(headers["access-control-allow-origin"] == "https://shop.example")
        #expect(headers["access-control-allow-methods"] == "GET, POST")
        let allowed = Set((headers["access-control-allow-headers"] ?? "").components(separatedBy: ", "))
        for name in [
            "content-type", "authorization", "connect-protocol-version", "connect-timeout-ms", "x-grpc-web", "x-user-agent",
            "x-api-key", "idempotency-key", "x-request-id", "grpc-timeout", "traceparent",
        ] {
            #expect(allowed.contains(name), "\(name)")
        }
        #expect(headers["access-control-max-age"] == "7200")
        #expect(headers["vary"] == "origin")
        #expect(headers["access-control-allow-credentials"] == nil)
    }

    @Test("origins compare without case or a trailing slash, and are echoed as sent")
    func normalizedOrigins() throws {
        let headers = try #require(policy.preflight(preflight(origin: "http://localhost:3000")))
        #expect(headers["access-control-allow-origin"] == "http://localhost:3000")
        #expect(policy.preflight(preflight(origin: "http://localhost:3001")) == nil)
        #expect(policy.preflight(preflight(origin: "https://shop.example.evil.com")) == nil)
    }

    @Test("no preflight answer for another origin, no origin, no requested method, or another HTTP method")
    func refusedPreflights() {
        #expect(policy.preflight(preflight(origin: "https://evil.example")) == nil)
        #expect(policy.preflight(preflight(origin: nil)) == nil)
        #expect(policy.preflight(preflight(origin: "https://shop.example", method: nil)) == nil)
        #expect(policy.preflight(preflight(origin: "https://shop.example", httpMethod: "POST")) == nil)
        #expect(CORSPolicy(origins: []).preflight(preflight(origin: "https://shop.example")) == nil)
    }

    @Test("* allows every origin")
    func anyOrigin() throws {
        let any = CORSPolicy(origins: ["*"])
        let headers = try #require(any.preflight(preflight(origin: "https://anywhere.example")))
        #expect(headers["access-control-allow-origin"] == "https://anywhere.example")
    }

    @Test("an answer to an allowed origin names it and exposes our headers, whole or streamed")
    func decoratesAllowed() throws {
        let request = EdgeFixture.request(EdgeFixture.say.path, headers: [("origin", "https://shop.example")])
        let captured = CapturedWebResponse()
        policy.decorate(captured, for: request).send(status: 200, headers: ["content-type": "application/json"], body: Data())
        let headers = captured.captured.headers
        #expect(headers["content-type"] == "application/json")
        #expect(headers["access-control-allow-origin"] == "https://shop.example")
        let exposed = Set((headers["access-control-expose-headers"] ?? "").components(separatedBy: ", "))
        for name in ["grpc-status", "grpc-message", "shop-error-reason", "shop-error-details-bin", "x-request-id", "connect-content-encoding"] {
            #expect(exposed.contains(name), "\(name)")
        }
        #expect(headers["vary"] == "origin")

        let streamed = CapturedWebResponse()
        policy.decorate(streamed, for: request).start(status: 200, headers: ["vary": "authorization, x-api-key"])
        #expect(streamed.captured.headers["access-control-allow-origin"] == "https://shop.example")
        #expect(streamed.captured.headers.values("vary") == ["authorization, x-api-key, origin"])
    }

    @Test("another origin gets no CORS headers, only vary; with no origin configured nothing changes")
    func leavesOthers() {
        let captured = CapturedWebResponse()
        let request = EdgeFixture.request(EdgeFixture.say.path, headers: [("origin", "https://evil.example")])
        policy.decorate(captured, for: request).send(status: 200, headers: [:], body: Data())
        #expect(captured.captured.headers["access-control-allow-origin"] == nil)
        #expect(captured.captured.headers["access-control-expose-headers"] == nil)
        #expect(captured.captured.headers["vary"] == "origin")
        let plain = CapturedWebResponse()
        #expect(CORSPolicy(origins: []).decorate(plain, for: request) === plain)
    }

    @Test("a decorated response passes writes, the end, cancellation, the deadline and the call note through")
    func passesThrough() async throws {
        let captured = CapturedWebResponse()
        let request = EdgeFixture.request(EdgeFixture.say.path, headers: [("origin", "https://shop.example")])
        let response = policy.decorate(captured, for: request)
        response.start(status: 200, headers: [:])
        try await response.write(Data("a".utf8))
        response.noteCall(path: "/p", status: nil, requestID: RequestID("r"))
        // The deadline reaches the transport's timers, not a timer of the wrapper's own.
        let deadline = ContinuousClock.now + .seconds(30)
        response.setDeadline(deadline) {}
        #expect(captured.captured.deadlines == [deadline])
        let cancelled = EdgeProbe()
        response.onCancel { cancelled.noteCancelled() }
        captured.cancel()
        #expect(response.isCancelled)
        #expect(cancelled.cancelled == 1)
        response.end()
        #expect(captured.captured.body == Data("a".utf8))
        #expect(captured.captured.notedPath == "/p")
        #expect(captured.captured.ended)
    }

    @Test("through the web edge: a preflight is 204, a disallowed one reaches the RPC edge's 405, calls carry the headers")
    func throughWebEdge() async throws {
        var configuration = WebEdge.Configuration()
        configuration.corsOrigins = ["https://shop.example"]
        configuration.serveWeb = false
        let edge = try WebEdge(
            configuration: configuration, router: EdgeFixture.router(), health: HealthMonitor(), defaultUnaryTimeout: .seconds(10),
            logger: Logger(label: "cors-test"))
        let allowed = CapturedWebResponse()
        edge.serve(preflight(origin: "https://shop.example"), response: allowed)
        #expect(allowed.captured.status == 204)
        #expect(allowed.captured.headers["access-control-allow-origin"] == "https://shop.example")
        let refused = CapturedWebResponse()
        edge.serve(preflight(origin: "https://evil.example"), response: refused)
        #expect(refused.captured.status == 405)
        #expect(refused.captured.headers["access-control-allow-origin"] == nil)

        let call = CapturedWebResponse()
        edge.serve(
            EdgeFixture.request(
                EdgeFixture.say.path, headers: [("content-type", "application/json"), ("origin", "https://shop.example")],
                body: Data(#"{"text":"c"}"#.utf8)),
            response: call)
        let state = await call.ended()
        #expect(state.status == 200)
        #expect(state.headers["access-control-allow-origin"] == "https://shop.example")
        #expect(state.headers["access-control-expose-headers"]?.contains("shop-error-reason") == true)
    }
}
