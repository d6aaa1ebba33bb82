import ArgumentParser
import Logging
import RPC
import RPCHTTP2
import ServiceKit

/// `bench.v1.BenchService/Echo`: the unary JSON method `Benchmarks/run` measures.
enum BenchContract {
    static let echo = MethodDescriptor<EchoMessage, EchoMessage>(
        service: "bench.v1.BenchService", method: "Echo", kind: .unary, idempotent: true)
}

/// `{message}`, answered unchanged.
struct EchoMessage: RPCMessage {
    var message: String
    static let fields = [FieldDescriptor("message", "String")]
}

/// Serves the benchmark method on our runtime, with health and Describe like every process.
struct BenchServer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-server", abstract: "Serves bench.v1.BenchService/Echo for Benchmarks/run.")

    @OptionGroup var options: ServiceOptions

    @Option(help: "Event loops (default: one per core).")
    var loops: Int?

    @Option(help: "Start handlers of unary requests up to this many bytes on the event loop (0: always on the pool).")
    var inlineStartLimit = ServerConfiguration(port: 0).inlineStartLimit

    func run() async throws {
        try await ServiceMain.serve("bench-server", options: options) { logger in
            var configuration = ServerConfiguration(host: options.host, port: options.resolvedPort(default: 7100))
            configuration.loopCount = loops
            configuration.inlineStartLimit = inlineStartLimit
            configuration.gracePeriod = .seconds(options.graceSeconds)
            let core = BenchCore()
            return BenchServerProcess(
                server: try HTTP2Server(configuration: configuration, router: core.router, logger: logger), core: core)
        }
    }
}

/// The benchmark method with health and Describe; nothing beside the server, nothing to close.
struct BenchCore: ServiceCore {
    /// Echo, health and Describe.
    let router: Router
    /// Serving until a termination signal.
    let health = HealthMonitor()
    /// Nothing runs beside the server.
    var companions: [@Sendable () async -> Void] { [] }

    /// The router, with health and Describe.
    init() {
        var router = Router()
        router.immediateUnary(BenchContract.echo) { request, _ in request }
        router.addStandardServices(health: health)
        self.router = router
    }

    /// Nothing to close.
    func close() async {}
}

/// ``BenchCore`` behind the server ``ServiceMain`` runs.
struct BenchServerProcess: ServiceServer {
    /// The server, with the loops and inline limit of the flags.
    let server: HTTP2Server
    /// The router.
    let core: BenchCore
}

/// The process entry: ``ServiceMain/main(_:)`` with ``BenchServer``.
@main
enum BenchServerMain {
    /// Fills closed standard descriptors, then runs ``BenchServer``.
    static func main() { ServiceMain.main(BenchServer.self) }
}
