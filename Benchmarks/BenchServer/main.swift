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
@main
struct BenchServer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-server", abstract: "Serves bench.v1.BenchService/Echo for Benchmarks/run.")

    @OptionGroup var options: ServiceOptions

    @Option(help: "Event loops (default: one per core).")
    var loops: Int?

    @Option(help: "Start handlers of unary requests up to this many bytes on the event loop (0: always on the pool).")
    var inlineStartLimit = ServerConfiguration(port: 0).inlineStartLimit

    func run() async throws {
        ServiceRunner.bootstrapLogging(level: options.level)
        let logger = Logger(label: "bench-server")
        var router = Router()
        router.immediateUnary(BenchContract.echo) { request, _ in request }
        let health = HealthMonitor()
        router.addStandardServices(health: health)
        var configuration = ServerConfiguration(host: options.host, port: options.resolvedPort(default: 7100))
        configuration.loopCount = loops
        configuration.inlineStartLimit = inlineStartLimit
        configuration.gracePeriod = .seconds(options.graceSeconds)
        let server = try HTTP2Server(configuration: configuration, router: router, logger: logger)
        try await ServiceRunner.run(server, health: health, logger: logger)
    }
}
