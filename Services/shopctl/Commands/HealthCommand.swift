import ArgumentParser
import Contracts
import RPC

/// `shopctl health`: `grpc.health.v1.Health/Check` on the gateway.
struct HealthCommand: AsyncParsableCommand {
    /// The command's name and help.
    static let configuration = CommandConfiguration(
        commandName: "health", abstract: "Check that the gateway is serving (exit 5 when it is not).")

    /// `--gateway`, `--json`, `--timeout`.
    @OptionGroup var global: GlobalOptions
    /// The service to ask about.
    @Option(help: "The service to ask about (default: the whole gateway).") var service = ""

    /// Makes the call and prints the answer.
    func run() async throws {
        try await global.withContext { context in
            let reply = try await context.gateway.unary(HealthContract.check, HealthCheckRequest(service: service))
            let status = reply.message.status
            context.output.message(reply.raw) { status.rawValue }
            guard status == .serving else {
                throw ShopctlError(
                    .unavailable, reason: status.rawValue,
                    "\(service.isEmpty ? "The gateway" : service) at \(global.gateway) is \(status.rawValue).")
            }
        }
    }
}
