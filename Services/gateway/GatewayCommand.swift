import ArgumentParser
import Foundation
import ServiceKit
import RPC

/// The `gateway` executable: the one address clients use (API.md §7).
struct GatewayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway",
        abstract: "Routes every public Storefront method to its service and serves shop.gateway.v1.StorefrontService.")

    private static let environment = ProcessInfo.processInfo.environment

    @OptionGroup var options: ServiceOptions
    @OptionGroup var auth: AuthLinkOptions

    @OptionGroup var catalog: CatalogLinkOptions
    @OptionGroup var basket: BasketLinkOptions
    @OptionGroup var order: OrderLinkOptions

    @Option(help: "Requests a second per client, 0 for no limit (env SHOP_GATEWAY_RATE_LIMIT).")
    var rateLimit = Double(environment["SHOP_GATEWAY_RATE_LIMIT"] ?? "") ?? 50

    @Option(help: "Requests a client may make at once above the rate (env SHOP_GATEWAY_RATE_BURST).")
    var rateBurst = Int(environment["SHOP_GATEWAY_RATE_BURST"] ?? "") ?? 100

    @Option(help: "Streams of one watch method (WatchBasket, WatchAuthState) a user may hold open at once (env SHOP_GATEWAY_MAX_WATCHES_PER_USER).")
    var maxWatchesPerUser = Int(environment["SHOP_GATEWAY_MAX_WATCHES_PER_USER"] ?? "") ?? 10

    @Option(help: "HTTP/2 connections to each upstream, 0 for one per core (env SHOP_GATEWAY_UPSTREAM_CONNECTIONS).")
    var upstreamConnections = Int(environment["SHOP_GATEWAY_UPSTREAM_CONNECTIONS"] ?? "") ?? 0

    @Flag(
        inversion: .prefixedNo,
        help: "Run each event loop on a core of its own (env SHOP_GATEWAY_PIN_LOOPS; 0 turns it off).")
    var pinLoops = environment["SHOP_GATEWAY_PIN_LOOPS"] != "0"

    @Option(
        name: .customLong("cors-origin"),
        help: "An origin (scheme://host[:port]) whose pages may call the API from a browser; repeatable (env SHOP_GATEWAY_CORS_ORIGINS, comma-separated). None by default.")
    var corsOrigins: [String] = (environment["SHOP_GATEWAY_CORS_ORIGINS"] ?? "").split(separator: ",").map {
        $0.trimmingCharacters(in: .whitespaces)
    }.filter { !$0.isEmpty }

    @Option(help: "A directory of files to serve at / instead of the built-in web storefront; empty for the built-in one (env SHOP_GATEWAY_WEB_ROOT).")
    var webRoot = environment["SHOP_GATEWAY_WEB_ROOT"] ?? ""

    @Flag(help: "Serve no web storefront at / (the API, the account pages and /healthz stay).")
    var noWeb = false

    @Option(help: "Serve /metrics on this port alone, to every peer, and not on the gateway's own port: for scrapers on a network the clients' route does not reach (env SHOP_GATEWAY_METRICS_PORT).")
    var metricsPort: Int?

    /// ``metricsPort``, else `SHOP_GATEWAY_METRICS_PORT` (text that is not a number is kept as
    /// 0, which validation refuses).
    var resolvedMetricsPort: Int? {
        metricsPort ?? Self.environment["SHOP_GATEWAY_METRICS_PORT"].map { Int($0) ?? 0 }
    }

    @Flag(help: "Answer /metrics to every peer, not only to loopback ones; keep /metrics off the public route in front (env SHOP_GATEWAY_METRICS_PUBLIC=1).")
    var metricsPublic = environment["SHOP_GATEWAY_METRICS_PUBLIC"] == "1"

    func validate() throws {
        for origin in corsOrigins {
            guard let url = URL(string: origin), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil,
                url.path.isEmpty, url.query == nil
            else {
                throw ValidationError("--cors-origin '\(origin)' is not an origin: give scheme://host[:port], as a browser sends it.")
            }
        }
        if !webRoot.isEmpty {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: webRoot, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw ValidationError("--web-root '\(webRoot)' is not a directory.")
            }
        }
        if let port = resolvedMetricsPort {
            guard (1...65535).contains(port) else { throw ValidationError("--metrics-port (SHOP_GATEWAY_METRICS_PORT) must be 1...65535.") }
            guard port != options.resolvedPort(default: 8080) else {
                throw ValidationError("--metrics-port must differ from the gateway's own port.")
            }
        }
        guard upstreamConnections >= 0 else { throw ValidationError("--upstream-connections must be 0 or more.") }
        guard rateLimit == 0 || (0.001...1_000_000).contains(rateLimit) else {
            throw ValidationError("--rate-limit must be 0 (no limit) or between 0.001 and 1000000 requests a second.")
        }
        guard rateBurst >= 1 else { throw ValidationError("--rate-burst must be at least 1.") }
        guard maxWatchesPerUser >= 1 else { throw ValidationError("--max-watches-per-user must be at least 1.") }
    }

    /// The configuration the flags describe.
    var gatewayConfiguration: GatewayConfiguration {
        var configuration = GatewayConfiguration(dataDirectory: options.dataDir, auth: auth)
        // --default-timeout-ms (SHOP_DEFAULT_TIMEOUT_MS) sets the deadline of forwarded calls
        // that come without one, else the policy's own 10 s; the server's default follows it.
        configuration.policy.defaultTimeout = options.defaultTimeout(or: configuration.policy.defaultTimeout)
        options.apply(to: &configuration, program: "gateway", defaultPort: 8080, defaultTimeout: configuration.policy.defaultTimeout)
        configuration.catalogTarget = catalog.catalogTarget
        configuration.basketTarget = basket.basketTarget
        configuration.orderTarget = order.orderTarget
        configuration.rateLimit = rateLimit
        configuration.rateBurst = rateBurst
        configuration.maxWatchesPerUser = maxWatchesPerUser
        configuration.upstreamConnections = upstreamConnections == 0 ? nil : upstreamConnections
        configuration.pinLoops = pinLoops
        configuration.metricsPort = resolvedMetricsPort
        configuration.web = WebEdge.Configuration(corsOrigins: corsOrigins, webRoot: webRoot.isEmpty ? nil : webRoot, serveWeb: !noWeb, metricsPublic: metricsPublic)
        // A diagnostic for benchmarks: the handlers' old home, the cooperative pool.
        configuration.handlersStayOnLoop = Self.environment["SHOP_GATEWAY_POOL_HANDLERS"] != "1"
        return configuration
    }

    /// Builds the server and serves until SIGTERM or SIGINT (``ServiceMain``).
    func run() async throws {
        let configuration = gatewayConfiguration
        try await ServiceMain.serve("gateway", options: options) { logger in
            try GatewayServer.build(configuration: configuration, logger: logger)
        }
    }
}

/// The process entry: ``ServiceMain/main(_:)`` with ``GatewayCommand``.
@main
enum GatewayMain {
    /// Fills closed standard descriptors, then runs ``GatewayCommand``.
    static func main() { ServiceMain.main(GatewayCommand.self) }
}
