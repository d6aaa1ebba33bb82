#if DEBUG  // See InProcessStack.swift.
@testable import basket_svc
import RPC
import ServiceKit

extension InProcessCores {
    /// basket-svc over `auth` and `catalog`.
    static func basket(dataDirectory: String, databaseURL: String?, auth: RPCClient, catalog: RPCClient) async throws -> any ServiceCore {
        var configuration = BasketConfiguration(dataDirectory: dataDirectory)
        configuration.port = 0
        configuration.databaseURL = databaseURL
        configuration.authIssuer = issuer
        configuration.authAudience = audience
        return try await BasketServer.make(configuration: configuration, auth: auth, catalog: catalog, logger: logger)
    }
}
#endif
