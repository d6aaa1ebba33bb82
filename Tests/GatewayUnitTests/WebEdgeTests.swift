import Contracts
import Foundation
@testable import gateway
import Logging
import RPC
import RPCHTTP2
import ServiceKit
import ServiceTestSupport
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
