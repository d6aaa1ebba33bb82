#if DEBUG  // See InProcessStack.swift.
@testable import order_svc
import RPC
import ServiceKit

extension InProcessCores {
    /// order-svc over `auth`, `catalog` and `basket` (the addresses in its configuration are
    /// unused: the clients are given).
    static func order(
        dataDirectory: String, databaseURL: String?, auth: RPCClient, catalog: RPCClient, basket: RPCClient
    ) async throws -> any ServiceCore {
        var configuration = OrderConfiguration(
            port: 0, dataDirectory: dataDirectory, auth: authLink,
            catalogTarget: UpstreamTarget(host: "127.0.0.1", port: 7002),
            basketTarget: UpstreamTarget(host: "127.0.0.1", port: 7003))
        configuration.databaseURL = databaseURL
        return try await OrderServer.make(
            configuration: configuration, auth: auth, catalog: catalog, basket: basket, logger: logger)
    }
}
#endif
