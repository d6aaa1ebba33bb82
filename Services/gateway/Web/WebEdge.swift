import Contracts
import Foundation
import Logging
import RPC
import ServiceKit
import Telemetry

/// What the gateway serves on its port besides gRPC (API.md §9): `/healthz`, CORS preflights,
/// Connect and gRPC-Web calls (``RPCEdge``), the pages a mailed link opens
/// (``AccountPages``) and the web storefront's files (``StaticFiles``). Called on a loop
/// thread for every HTTP/1.1 request and every HTTP/2 request that is not gRPC.
struct WebEdge: WebHandler {
    /// The web edge's settings (`gateway --cors-origin`, `--web-root`, `--no-web`).
    struct Configuration: Sendable {
        /// Origins allowed to call from a browser's script (exact `scheme://host[:port]`).
        var corsOrigins: [String] = []
        /// The directory of the storefront's files; nil serves the one built into the gateway.
        var webRoot: String?
        /// Whether to serve a storefront at all.
        var serveWeb = true
        /// Whether `/metrics` answers every peer (`--metrics-public`) rather than loopback ones only.
        var metricsPublic = false
    }

    let rpc: RPCEdge
    let pages: AccountPages
    let files: StaticFiles?
    let cors: CORSPolicy
    let health: HealthMonitor
    /// `/metrics`, when the gateway counts (``MetricsEndpoint``): never rate limited, never
    /// behind CORS, for loopback peers only unless ``Configuration/metricsPublic``.
    let metrics: MetricsEndpoint?

    init(
        configuration: Configuration, router: Router, health: HealthMonitor, defaultUnaryTimeout: Duration?,
        metrics: MetricsRegistry? = nil, logger: Logger
    ) throws {
        self.metrics = metrics.map { MetricsEndpoint(registry: $0, publicAccess: configuration.metricsPublic) }
        rpc = RPCEdge(router: router, defaultUnaryTimeout: defaultUnaryTimeout, logger: logger)
        pages = AccountPages(router: router, logger: logger)
        files = configuration.serveWeb ? try StaticFiles(root: configuration.webRoot) : nil
        cors = CORSPolicy(origins: configuration.corsOrigins)
        self.health = health
    }

    func serve(_ request: WebRequest, response: any WebResponse) {
        if request.path == "/healthz" { return serveHealth(request, response: response) }
        if request.path == MetricsEndpoint.path {
            // Not the storefront's page either when served elsewhere (--metrics-port, --no-metrics).
            guard let metrics else { return WebEdge.sendText(response, status: 404, "Not found.\n") }
            return metrics.serve(request, response: response)
        }
        if request.method == "OPTIONS", let preflight = cors.preflight(request) {
            return response.send(status: 204, headers: preflight, body: Data())
        }
        let response = cors.decorate(response, for: request)
        if rpc.serve(request, response: response) { return }
        if pages.serve(request, response: response) { return }
        if let files, files.serve(request, response: response) { return }
        WebEdge.sendText(response, status: 404, "Not found.\n")
    }

    /// `/healthz`: `200 ok` while the gateway serves (its required upstreams answer), else 503 —
    /// for load balancers that cannot speak gRPC.
    private func serveHealth(_ request: WebRequest, response: any WebResponse) {
        guard request.method == "GET" || request.method == "HEAD" else {
            var headers = WebEdge.textHeaders
            headers.add("allow", "GET, HEAD")
            return response.send(status: 405, headers: headers, body: Data("Use GET.\n".utf8))
        }
        let serving = health.status(of: "") == .serving
        // The body goes for HEAD too: the transports send only its length then.
        response.send(status: serving ? 200 : 503, headers: WebEdge.textHeaders, body: Data((serving ? "ok\n" : "not serving\n").utf8))
    }

    static let textHeaders: WebHeaders = ["content-type": "text/plain; charset=utf-8", "cache-control": "no-store"]

    /// Answers with a short plain-text body.
    static func sendText(_ response: any WebResponse, status: Int, _ text: String) {
        response.send(status: status, headers: textHeaders, body: Data(text.utf8))
    }
}
