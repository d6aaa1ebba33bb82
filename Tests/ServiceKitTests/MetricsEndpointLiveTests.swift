import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing

/// `/metrics` of real service processes (catalog-svc, calling auth-svc): what a Prometheus
/// server scraping them reads, over HTTP/1.1 and HTTP/2 on each service's own port.
@Suite("Metrics endpoint (processes)")
struct MetricsEndpointLiveTests {
    /// `rpc_server_calls_total` of a catalog method and code, as catalog-svc writes it.
    static func calls(_ method: String, _ code: String, service: String = CatalogContract.service) -> String {
        "rpc_server_calls_total{service=\"\(service)\",method=\"\(method)\",code=\"\(code)\"}"
    }

    @Test("a service counts its calls by method and code, with durations, sizes and the process's figures, over HTTP/1.1 and HTTP/2")
    func countsCalls() async throws {
        try await withServiceStack([.auth, .catalog]) { stack in
            let catalog = try stack.client(.catalog)
            let options = CallOptions(timeout: .seconds(10))
            for _ in 0..<3 { _ = try await catalog.unary(CatalogContract.getProduct, GetProductRequest(id: 1), options: options) }
            await #expect(throws: RPCError.self) {
                try await catalog.unary(CatalogContract.getProduct, GetProductRequest(id: 987_654), options: options)
            }
            let unknown = MethodDescriptor<Empty, Empty>(service: "no.such.v1.Service", method: "Nothing", kind: .unary)
            await #expect(throws: RPCError.self) { try await catalog.unary(unknown, Empty(), options: options) }

            let port = try stack.service(.catalog).port
            for http2 in [false, true] {
                let scrape = try await MetricsScrape.fetch(port: port, http2: http2)
                #expect(scrape.status == 200)
                #expect(scrape.contentType == "text/plain; version=0.0.4; charset=utf-8")
                #expect(scrape.value(Self.calls("GetProduct", "OK")) == 3)
                #expect(scrape.value(Self.calls("GetProduct", "NOT_FOUND")) == 1)
                #expect(scrape.value("rpc_server_calls_started_total{service=\"\(CatalogContract.service)\",method=\"GetProduct\"}") == 4)
                // A path no method has counts under _OTHER, whatever the client sent.
                #expect(scrape.value(Self.calls("_OTHER", "UNIMPLEMENTED", service: "_OTHER")) == 1)
                #expect(!scrape.text.contains("no.such.v1.Service"))
                let durations = "rpc_server_call_duration_seconds_count{service=\"\(CatalogContract.service)\",method=\"GetProduct\"}"
                #expect(scrape.value(durations) == 4)
                let sizes = "rpc_server_response_size_bytes_count{service=\"\(CatalogContract.service)\",method=\"GetProduct\"}"
                #expect(scrape.value(sizes) == 4)
                #expect(scrape.value("rpc_server_call_duration_seconds_bucket{service=\"\(CatalogContract.service)\",method=\"GetProduct\",le=\"+Inf\"}") == 4)
                // A called method shows every code from zero, so that a first INTERNAL is an
                // increase rate() sees; a method never called shows only its zero starts.
                #expect(scrape.value(Self.calls("GetProduct", "INTERNAL")) == 0)
                #expect(scrape.value(Self.calls("ListCategories", "INTERNAL")) == nil)
                #expect(scrape.value("rpc_server_calls_started_total{service=\"\(CatalogContract.service)\",method=\"ListCategories\"}") == 0)
                #expect(!scrape.text.contains("rpc_server_call_duration_seconds_count{service=\"\(CatalogContract.service)\",method=\"ListCategories\"}"))
                #expect(scrape.value("storefront_build_info{program=\"catalog-svc\",version=\"0.9.0\"}") == 1)
                #expect((scrape.value("process_open_fds") ?? 0) > 0)
                #expect((scrape.value("process_resident_memory_bytes") ?? 0) > 1_048_576)
                let started = scrape.value("process_start_time_seconds") ?? 0
                #expect(abs(started - Date().timeIntervalSince1970) < 3600, "start time \(started)")
                #expect((scrape.value("rpc_server_connections_open") ?? 0) >= 1)
            }
        }
    }

    @Test("a service's port answers requests that are not gRPC calls as before, /metrics aside: 415, 405, and 404 over HTTP/1.1")
    func otherRequests() async throws {
        try await withServiceStack([.auth]) { stack in
            let url = "http://127.0.0.1:\(try stack.service(.auth).port)"
            let post = try await Command.run(
                "curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--http2-prior-knowledge", "-X", "POST", "-H", "content-type: text/plain",
                         url + AuthContract.getJwks.path], timeout: .seconds(15))
            #expect(post.output == "415")
            let get = try await Command.run(
                "curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--http2-prior-knowledge", url + AuthContract.getJwks.path],
                timeout: .seconds(15))
            #expect(get.output == "405")
            let http1 = try await Command.run(
                "curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--http1.1", url + "/other"], timeout: .seconds(15))
            #expect(http1.output == "404")
            // The refused ones are counted, under the method they named.
            let scrape = try await MetricsScrape.fetch(port: try stack.service(.auth).port)
            let refused = "rpc_server_calls_started_total{service=\"\(AuthContract.service)\",method=\"GetJwks\"}"
            #expect(scrape.value(refused) == 2, "\(scrape.lines(of: "rpc_server_calls_started_total"))")
        }
    }

    @Test("--no-metrics: nothing counted and no /metrics, gRPC served as before")
    func noMetrics() async throws {
        try await withServiceStack([.auth], extraArguments: [.auth: ["--no-metrics"]]) { stack in
            let health = try await stack.client(.auth).unary(HealthContract.check, HealthCheckRequest(), options: CallOptions(timeout: .seconds(5)))
            #expect(health.status == .serving)
            let port = try stack.service(.auth).port
            let scrape = try await MetricsScrape.fetch(port: port, http2: true)
            #expect(scrape.status != 200)
            #expect(!scrape.text.contains("rpc_server_calls_total"))
        }
    }
}
