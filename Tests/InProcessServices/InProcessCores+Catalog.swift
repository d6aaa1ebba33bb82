#if DEBUG  // See InProcessStack.swift.
@testable import catalog_svc
import RPC
import ServiceKit

extension InProcessCores {
    /// catalog-svc over `auth`, with its seed catalog unless `seed` is false.
    static func catalog(dataDirectory: String, databaseURL: String?, auth: RPCClient, seed: Bool) async throws -> any ServiceCore {
        var configuration = CatalogConfiguration(port: 0, dataDirectory: dataDirectory, auth: authLink)
        configuration.seed = seed
        configuration.databaseURL = databaseURL
        return try await CatalogServer.make(configuration: configuration, auth: auth, logger: logger)
    }
}
#endif
