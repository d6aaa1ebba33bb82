import ArgumentParser
import Contracts
import Foundation
import RPC

/// `shopctl describe [NAME]`: what the gateway serves, from `shop.meta.v1.MetaService/Describe`,
/// and the fields of any message type by name.
struct DescribeCommand: AsyncParsableCommand {
    /// The command's name and help.
    static let configuration = CommandConfiguration(
        commandName: "describe", abstract: "List the services and methods the gateway serves, and the fields of a message.",
        discussion: """
            NAME is a service (its full name, its last part or a piece of it), a method in any form \
            `call` takes, or a message type such as Product or ListProductsRequest; case does not matter. \
            Everything the name matches is shown.

            Examples:
              shopctl describe
              shopctl describe catalog
              shopctl describe CatalogService/GetProduct
              shopctl describe Product
            """)

    /// `--gateway`, `--json`, `--timeout`.
    @OptionGroup var global: GlobalOptions
    /// The service, method or message to show.
    @Argument(help: "Only this service, method (CatalogService/GetProduct) or message (Product).")
    var name: String?

    /// What a name matched, as `--json` prints it.
    struct Matches: Codable, Equatable {
        /// The services, each with only the methods the name matched when it named a method.
        var services: [ServiceDescription]
        /// The message types.
        var messages: [Message]
    }

    /// A message type and its fields.
    struct Message: Codable, Equatable {
        /// The type name, e.g. `Product`.
        var name: String
        /// Its fields, in declaration order.
        var fields: [FieldDescriptor]
    }

    /// Makes the call and prints the answer.
    func run() async throws {
        try await global.withContext { context in
            let reply = try await context.gateway.unary(MetaContract.describe, Empty())
            guard let name else {
                context.output.message(reply.raw) { Self.render(reply.message.services) }
                return
            }
            let found = try Self.matches(name, in: reply.message.services)
            context.output.message(try JSONCodec.shared.encode(found)) { Self.render(found) }
        }
    }

    /// What `query` names among `services` and the contract's message types: the method it
    /// names, else the services it names; and the message of that name. SERVICE_NOT_FOUND,
    /// with close matches, when it names nothing.
    static func matches(_ query: String, in services: [ServiceDescription]) throws(ShopctlError) -> Matches {
        let methods = services.flatMap { service in service.methods.map { APINames.Method(service: service.name, method: $0.name) } }
        var found = Matches(services: [], messages: [])
        var suggestions: [String] = []
        if MethodName(query) != nil {
            switch APINames.method(query, in: methods) {
            case .found(let method):
                found.services = services.filter { $0.name == method.service }.map { service in
                    ServiceDescription(name: service.name, methods: service.methods.filter { $0.name == method.method })
                }
            case .ambiguous(let candidates), .unknown(closeMatches: let candidates):
                suggestions += candidates.map(\.shortName)
            }
        }
        if found.services.isEmpty { found.services = matching(query, in: services) }
        switch APINames.message(query, in: Array(APIDescription.allMessageTypes.keys).sorted()) {
        case .found(let message):
            found.messages = [Message(name: message, fields: APIDescription.allMessageTypes[message] ?? [])]
        case .ambiguous(let candidates), .unknown(closeMatches: let candidates):
            suggestions += candidates
        }
        guard found.services.isEmpty && found.messages.isEmpty else { return found }
        let close = suggestions.isEmpty ? "" : " Close: \(suggestions.prefix(APINames.maximumSuggestions).joined(separator: ", "))."
        throw ShopctlError(
            .rejected, reason: "SERVICE_NOT_FOUND",
            "The gateway serves no service or method, and the API has no message, matching '\(query)'.\(close)",
            hint: "see them all with `shopctl describe`")
    }

    /// The services `query` names (``APINames/services(matching:in:)``).
    static func matching(_ query: String, in services: [ServiceDescription]) -> [ServiceDescription] {
        let names = Set(APINames.services(matching: query, in: services.map(\.name)))
        return services.filter { names.contains($0.name) }
    }

    /// The services, then the messages.
    static func render(_ matches: Matches) -> String {
        let sections = (matches.services.isEmpty ? [] : [render(matches.services)]) + matches.messages.map(render)
        return sections.joined(separator: "\n\n")
    }

    /// A message: its name, then one field per line with its type, `?` marking an optional one.
    static func render(_ message: Message) -> String {
        var table = Table([.init("  FIELD"), .init("TYPE")])
        for field in message.fields { table.append(["  " + field.name + (field.optional ? "?" : ""), field.type]) }
        return "message \(message.name)\n" + table.render()
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
