public import Logging
public import RPC
public import RPCHTTP2
internal import Contracts
package import Telemetry

// Start-up: where ServiceKit chooses the transport that carries a service's calls to another.

extension ClientConfiguration {
    /// How Storefront's processes call each other: the defaults, plus keepalive PINGs every
    /// 30 s while calls wait on a quiet connection, so an upstream that hangs (a stopped VM, a
    /// dropped route) is given up after 10 s more instead of at each call's deadline. Our
    /// servers accept pings at any rate; third-party gRPC servers may not, so plain clients
    /// keep keepalive off.
    public static var upstream: ClientConfiguration {
        var configuration = ClientConfiguration()
        configuration.keepaliveInterval = .seconds(30)
        configuration.keepaliveTimeout = .seconds(10)
        return configuration
    }

    /// These settings, counting calls into `metrics` (every method of the contracts by name,
    /// `rpc_client_…`) and recording the spans of calls made while serving one into `spans`.
    package func observed(metrics: MetricsRegistry?, spans: (any SpanRecorder)?) -> ClientConfiguration {
        var configuration = self
        configuration.metrics = metrics.map { RPCCallMetrics(side: .client, paths: Self.contractPaths, registry: $0) }
        configuration.spans = spans
        return configuration
    }

    /// Every method a Storefront process may call: the contracts' own and health.
    private static let contractPaths: [String] = APIDescription.allMethods.map(\.path)
}

extension RPCClient {
    /// A client of another Storefront process at `address`: HTTP/2 with the
    /// ``ClientConfiguration/upstream`` settings, on an event loop of its own.
    public static func upstream(_ address: SocketAddressText) throws -> RPCClient {
        try RPCClient(target: address, configuration: .upstream)
    }
}

extension RPCClient {
    /// A client of the service named `name` at `target`: for one literal address, HTTP/2 to it
    /// (``upstream(_:)``); for several, or a name, a client balanced over the replicas
    /// (``BalancingTransport``), kept up to date by a ``ReplicaMonitor`` (health checks each
    /// second, lookups every ten) that closing the client stops. Every replica's connections
    /// share one event loop.
    public static func upstream(
        _ target: UpstreamTarget, name: String, configuration: ClientConfiguration = .upstream, logger: Logger
    ) throws -> RPCClient {
        if let address = target.singleLiteralAddress {
            return try RPCClient(target: address, configuration: configuration)
        }
        let group = try EventLoopGroup(count: configuration.loopCount, name: "client")
        let checkConfiguration = configuration.forHealthChecks
        let monitor = ReplicaMonitor(name: name, target: target, lookup: ReplicaSet.systemLookup, logger: logger) { address in
            RPCClient(target: address, configuration: checkConfiguration, group: group)
        }
        let transport = BalancingTransport(replicas: monitor.replicas, onClose: {
            await monitor.stop()
            await group.shutdown()
        }) { address in
            HTTP2ClientTransport(target: address, configuration: configuration, group: group)
        }
        monitor.start()
        return RPCClient(transport: transport)
    }
}

extension ClientConfiguration {
    /// The connection health checks go over: one, reconnecting within half a second — less than
    /// the checks' interval, so a check after a failure tries a new connection, and a failed
    /// check means the replica cannot be reached now, not that the connection is still backing
    /// off from an outage already over.
    package var forHealthChecks: ClientConfiguration {
        var configuration = self
        configuration.connectionCount = 1
        configuration.reconnectMaxBackoff = min(reconnectMaxBackoff, .milliseconds(500))
        return configuration
    }
}
