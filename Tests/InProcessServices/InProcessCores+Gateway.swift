#if DEBUG  // See InProcessStack.swift.
@testable import gateway
import Foundation
import RPC
import ServiceKit
package import ServiceTestSupport

extension InProcessCores {
    /// The gateway in front of `stack`'s four services, with the admin key the live harness
    /// gives its process and `options`. Each upstream's three clients (unary calls, streams,
    /// health checks) go over transports of their own, as the process has connections of its
    /// own for each, and each can be cut off (``ServiceStack/cutGatewayOff(from:)``).
    static func gateway(in stack: ServiceStack, options: InProcessGatewayOptions) throws -> any ServiceCore {
        var configuration = GatewayConfiguration(dataDirectory: stack.dataDirectory(.gateway).path, auth: authLink)
        configuration.port = 0
        if let rateLimit = options.rateLimit { configuration.rateLimit = rateLimit }
        if let rateBurst = options.rateBurst { configuration.rateBurst = rateBurst }
        if let maxWatchesPerUser = options.maxWatchesPerUser { configuration.maxWatchesPerUser = maxWatchesPerUser }
        let upstreams = try GatewayServer.Upstreams(of: configuration) { definition in
            guard let name = ServiceName(rawValue: definition.name) else {
                throw InProcessStackError.notBuiltInProcess(definition.name)
            }
            let service = try stack.inProcessService(name)
            func client() -> RPCClient {
                RPCClient(transport: InterruptibleTransport { service.makeTransport() })
            }
            return Upstream(
                name: definition.name, services: definition.services, required: definition.required, client: client(),
                streamClient: client(), healthClient: client())
        }
        return try GatewayServer.make(configuration: configuration, upstreams: upstreams, adminKey: stack.adminKey, logger: logger)
    }
}

extension ServiceStack {
    /// Cuts the in-process gateway off from `name`, as if `name`'s process were killed: the
    /// gateway's calls to it under way end with `UNAVAILABLE`, and it cannot reach `name`
    /// again until ``reconnectGateway(to:)``. `name` itself runs on.
    package func cutGatewayOff(from name: ServiceName) async throws {
        for transport in try gatewayTransports(to: name) { await transport.cut() }
    }

    /// Lets the in-process gateway reach `name` again, as if `name`'s process were started again.
    package func reconnectGateway(to name: ServiceName) throws {
        for transport in try gatewayTransports(to: name) { transport.restore() }
    }

    /// The transports of the in-process gateway's clients of `name`.
    private func gatewayTransports(to name: ServiceName) throws -> [InterruptibleTransport] {
        guard let gateway = try inProcessService(.gateway).core as? GatewayServer.Core,
            let upstream = gateway.upstreams.first(where: { $0.name == name.rawValue })
        else { throw InProcessStackError.notBuiltInProcess(name.rawValue) }
        return [upstream.client, upstream.streamClient, upstream.healthClient].compactMap {
            $0.transport as? InterruptibleTransport
        }
    }
}
#endif
