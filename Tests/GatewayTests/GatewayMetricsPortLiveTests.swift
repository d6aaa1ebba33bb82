import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing

/// `gateway --metrics-port`: `/metrics` on a port of its own, to every peer, and no longer on
/// the clients' port — for scrapers on a network the clients' route does not reach.
@Suite("Gateway --metrics-port")
struct GatewayMetricsPortLiveTests {
    @Test("/metrics moves to its own port (HTTP/1.1 and HTTP/2) and the clients' port answers it 404, even to loopback")
    func ownPort() async throws {
        let metricsPort = try FreePorts.take(1)[0]
        try await withLiveGateway(gatewayArguments: ["--metrics-port", String(metricsPort)]) { stack in
            _ = try await stack.gateway.unary(CatalogContract.getProduct, GetProductRequest(id: 1), options: CallOptions(timeout: .seconds(10)))
            let getProduct = "rpc_server_calls_total{service=\"\(CatalogContract.service)\",method=\"GetProduct\",code=\"OK\"}"
            for http2 in [false, true] {
                let scrape = try await MetricsScrape.fetch(port: metricsPort, http2: http2)
                #expect(scrape.status == 200)
                #expect(scrape.value(getProduct) == 1, "\(scrape.lines(of: "rpc_server_calls_total"))")
                #expect(scrape.value("storefront_build_info{program=\"gateway\",version=\"0.9.0\"}") == 1)
            }
            let clients = try await MetricsScrape.fetch(port: try stack.service(.gateway).port)
            #expect(clients.status == 404)
            #expect(!clients.text.contains("rpc_server_calls_total"))
            // The listener serves nothing else.
            let other = try await MetricsScrape.fetch(port: metricsPort, path: "/")
            #expect(other.status == 404)
        }
    }
}

/// How the gateway refuses a `--metrics-port` it cannot have.
@Suite("Gateway --metrics-port refusals")
struct GatewayMetricsPortRefusalTests {
    /// Runs the gateway executable with `arguments` (and a scratch data directory) until it exits.
    static func run(_ arguments: [String]) async throws -> Command.Result {
        let scratch = try TestScratch.makeDirectory(prefix: "gateway-metrics-port")
        defer { try? FileManager.default.removeItem(at: scratch) }
        return try await Command.run(
            ServiceProcess.executable("gateway").path, ["--data-dir", scratch.path, "--log-level", "info"] + arguments,
            environment: ["SHOP_GATEWAY_METRICS_PORT": nil, "SHOP_PORT": nil], timeout: .seconds(30))
    }

    @Test("a --metrics-port already taken stops the start with status 78, naming the flag")
    func taken() async throws {
        let taken = try ListeningSocket()
        let result = try await Self.run(["--port", "0", "--metrics-port", String(taken.port)])
        #expect(result.status == 78, "\(result)")
        #expect(result.errors.contains("--metrics-port"), "\(result)")
        withExtendedLifetime(taken) {}
    }

    @Test("--metrics-port equal to the gateway's port is refused before anything starts")
    func samePort() async throws {
        let result = try await Self.run(["--port", "18080", "--metrics-port", "18080"])
        #expect(result.status == 64, "\(result)")
        #expect(result.errors.contains("must differ"), "\(result)")
    }
}
