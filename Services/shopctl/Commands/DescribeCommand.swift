import ArgumentParser
import Contracts
import RPC

/// `shopctl describe [SERVICE]`: what the gateway serves, from `shop.meta.v1.MetaService/Describe`.
struct DescribeCommand: AsyncParsableCommand {
    /// The command's name and help.
    static let configuration = CommandConfiguration(
        commandName: "describe", abstract: "List the services and methods the gateway serves, with their fields.")

    /// `--gateway`, `--json`, `--timeout`.
    @OptionGroup var global: GlobalOptions
    /// The service to show.
    @Argument(help: "Only this service: its full name, its last part (CatalogService) or part of it (catalog).")
    var service: String?

    /// Makes the call and prints the answer.
    func run() async throws {
        try await global.withContext { context in
            let reply = try await context.gateway.unary(MetaContract.describe, Empty())
            guard let service else {
                context.output.message(reply.raw) { Self.render(reply.message.services) }
                return
            }
            let chosen = Self.matching(service, in: reply.message.services)
            guard !chosen.isEmpty else {
                throw ShopctlError(
                    .rejected, reason: "SERVICE_NOT_FOUND", "The gateway serves no service matching '\(service)'.",
                    hint: "see them all with `shopctl describe`")
            }
            let filtered = try JSONCodec.shared.encode(DescribeResponse(services: chosen))
            context.output.message(filtered) { Self.render(chosen) }
        }
    }

    /// The services `query` names: the one with that full name; else those whose last part
    /// equals it, ignoring case; else those whose name contains it, ignoring case.
    static func matching(_ query: String, in services: [ServiceDescription]) -> [ServiceDescription] {
        if let exact = services.first(where: { $0.name == query }) { return [exact] }
        let lowered = query.lowercased()
        let byLastPart = services.filter { $0.name.split(separator: ".").last?.lowercased() == lowered }
        if !byLastPart.isEmpty { return byLastPart }
        return services.filter { $0.name.lowercased().contains(lowered) }
    }

    /// Each service, then its methods with kind, auth and fields.
    static func render(_ services: [ServiceDescription]) -> String {
        services.map { service in
            var table = Table([.init("  METHOD"), .init("KIND"), .init("AUTH"), .init("RETRY")])
            for method in service.methods {
                table.append(["  " + method.name, method.kind.rawValue, method.auth.rawValue, method.idempotent ? "idempotent" : ""])
            }
            var lines = [service.name, table.render()]
            for method in service.methods where !method.requestFields.isEmpty || !method.responseFields.isEmpty {
                lines.append("  \(method.name)(\(fields(method.requestFields))) -> \(fields(method.responseFields))")
            }
            return lines.joined(separator: "\n")
        }.joined(separator: "\n\n")
    }

    /// Fields as `{name: Type, other?: Type}`.
    static func fields(_ fields: [FieldDescriptor]) -> String {
        "{" + fields.map { "\($0.name)\($0.optional ? "?" : ""): \($0.type)" }.joined(separator: ", ") + "}"
    }
}
