import Contracts
import Foundation
@testable import gateway
import Logging
import RPC
import RPCHTTP2
import ServiceKit
import ServiceTestSupport
import Telemetry
import Testing

/// The web edge's dispatcher (``WebEdge``): `/healthz` for load balancers that cannot speak
/// gRPC (API.md §9), and what is left for nobody.
@Suite("Gateway web edge dispatch")
struct WebEdgeTests {
    static func edge(health: HealthMonitor) throws -> WebEdge {
        try WebEdge(
            configuration: WebEdge.Configuration(serveWeb: false), router: Router(), health: health,
            defaultUnaryTimeout: .seconds(10), logger: Logger(label: "web-edge-tests") { _ in SwiftLogNoOpLogHandler() })
    }

    static func request(_ method: String, _ path: String) -> WebRequest {
        WebRequest(method: method, path: path, query: nil, headers: WebHeaders(), body: Data(), peer: "127.0.0.1:1", version: "HTTP/1.1")
    }

    static func serve(_ edge: WebEdge, _ method: String, _ path: String) async -> CapturedWebResponse.State {
        let response = CapturedWebResponse()
        edge.serve(request(method, path), response: response)
        return await response.ended()
    }

    @Test("/healthz answers 200 ok while the gateway serves, 503 while it does not; HEAD gets the length, other methods 405")
    func healthz() async throws {
        let health = HealthMonitor()
        let edge = try Self.edge(health: health)
        health.setStatus(.serving)
        let ok = await Self.serve(edge, "GET", "/healthz")
        #expect(ok.status == 200 && String(decoding: ok.body, as: UTF8.self) == "ok\n")
        #expect(ok.headers["cache-control"] == "no-store")
        let head = await Self.serve(edge, "HEAD", "/healthz")
        #expect(head.status == 200 && head.body.count == 3, "the transport drops a HEAD's body but sends its length")
        health.setStatus(.notServing)
        let down = await Self.serve(edge, "GET", "/healthz")
        #expect(down.status == 503)
        let post = await Self.serve(edge, "POST", "/healthz")
        #expect(post.status == 405 && post.headers["allow"] == "GET, HEAD")
    }

    @Test("a path nothing serves is 404, in words; with --no-web, / too")
    func notFound() async throws {
        let edge = try Self.edge(health: HealthMonitor())
        for path in ["/", "/nothing-here", "/favicon.ico"] {
            let answer = await Self.serve(edge, "GET", path)
            #expect(answer.status == 404, "\(path)")
            #expect(String(decoding: answer.body, as: UTF8.self) == "Not found.\n")
        }
    }
}

/// The gateway's `/metrics` (``MetricsEndpoint`` on the web edge): its operator's, so loopback
/// peers only unless `--metrics-public`.
@Suite("Web edge: /metrics")
struct WebEdgeMetricsTests {
    /// An edge counting into `registry`, public or not.
    static func edge(_ registry: MetricsRegistry, public: Bool) throws -> WebEdge {
        var configuration = WebEdge.Configuration(serveWeb: false)
        configuration.metricsPublic = `public`
        return try WebEdge(
            configuration: configuration, router: Router(), health: HealthMonitor(), defaultUnaryTimeout: .seconds(10),
            metrics: registry, logger: Logger(label: "web-edge-metrics-tests") { _ in SwiftLogNoOpLogHandler() })
    }

    /// `GET /metrics` from `peer`.
    static func scrape(_ edge: WebEdge, from peer: String, method: String = "GET") async -> CapturedWebResponse.State {
        let response = CapturedWebResponse()
        edge.serve(
            WebRequest(method: method, path: "/metrics", query: nil, headers: WebHeaders(), body: Data(), peer: peer, version: "HTTP/1.1"),
            response: response)
        return await response.ended()
    }

    @Test("loopback peers (IPv4, IPv6, IPv4-mapped) read the registry in Prometheus's text format", arguments: [
        "127.0.0.1:40000", "127.3.4.5:1", "[::1]:40000", "[::ffff:127.0.0.1]:9",
    ])
    func loopbackReads(peer: String) async throws {
        let registry = MetricsRegistry()
        registry.counter("test_scrapes_total", help: "A counter the test made.").increment(by: 3)
        let answer = await Self.scrape(try Self.edge(registry, public: false), from: peer)
        #expect(answer.status == 200)
        #expect(answer.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
        #expect(String(decoding: answer.body, as: UTF8.self).contains("\ntest_scrapes_total 3\n"))
    }

    @Test("other peers get 404 unless --metrics-public", arguments: ["10.0.0.5:1234", "[2001:db8::1]:80", "192.168.127.1:5"])
    func othersRefused(peer: String) async throws {
        let registry = MetricsRegistry()
        registry.counter("test_scrapes_total", help: "A counter the test made.").increment()
        let refused = await Self.scrape(try Self.edge(registry, public: false), from: peer)
        #expect(refused.status == 404)
        #expect(!String(decoding: refused.body, as: UTF8.self).contains("test_scrapes_total"))
        let allowed = await Self.scrape(try Self.edge(registry, public: true), from: peer)
        #expect(allowed.status == 200)
        #expect(String(decoding: allowed.body, as: UTF8.self).contains("test_scrapes_total 1"))
    }

    @Test("only GET and HEAD: other methods 405 with Allow")
    func methods() async throws {
        let edge = try Self.edge(MetricsRegistry(), public: false)
        let post = await Self.scrape(edge, from: "127.0.0.1:1", method: "POST")
        #expect(post.status == 405)
        #expect(post.headers["allow"] == "GET, HEAD")
        #expect(await Self.scrape(edge, from: "127.0.0.1:1", method: "HEAD").status == 200)
    }
}
