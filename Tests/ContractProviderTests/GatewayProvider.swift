@testable import catalog_svc
import ContractTesting
import Contracts
import Foundation
@testable import gateway
import RPC
import RPCHTTP2
import ServiceKit
import ServiceTestSupport
import Testing

/// The gateway as a provider (of shopctl's contract): built in-process by `GatewayServer.build`
/// in front of a real in-process catalog-svc (``CatalogProvider``) and the ``TestAuthority``
/// as auth-svc. Its states are catalog-svc's, set up in that catalog's store.
enum GatewayProvider {
    /// A running gateway and the catalog-svc behind it.
    struct Instance: Sendable {
        /// The gateway.
        let gateway: GatewayServer
        /// catalog-svc behind it, whose store the states work on.
        let catalog: CatalogServer
    }

    /// catalog-svc's state hooks, applied to the catalog behind the gateway.
    static var states: ProviderStates<Instance> {
        var states = ProviderStates<Instance>()
        let catalogStates = CatalogProvider.states
        for name in catalogStates.names {
            guard let hook = catalogStates.hook(name) else { continue }
            states.add(name) { instance, params in try await hook(instance.catalog, params) }
        }
        return states
    }

    /// Starts a fresh catalog-svc and a gateway in front of it.
    static func start() async throws -> RunningProvider<Instance> {
        let catalog = try await CatalogProvider.start()
        let directory: URL
        let authority: (server: HTTP2Server, address: SocketAddressText)
        let built: GatewayServer
        do {
            directory = try TestScratch.makeDirectory(prefix: "contract-provider-gateway")
            authority = try TestAuthority.startServer()
            // Every @Option must be assigned: read unparsed, swift-argument-parser traps.
            var auth = AuthLinkOptions()
            auth.authAddr = authority.address.description
            auth.authIssuer = TestAuthority.issuer
            auth.authAudience = TestAuthority.audience
            let unreachable = SocketAddressText(host: "127.0.0.1", port: 9)
            built = try GatewayServer.build(
                configuration: GatewayServer.Configuration(
                    port: 0, dataDirectory: directory.path, auth: auth, catalogAddress: catalog.address,
                    basketAddress: unreachable, orderAddress: unreachable, gracePeriod: .seconds(2)),
                logger: ContractLogging.quiet)
        } catch {
            await catalog.stop()
            throw error
        }
        let stop: @Sendable () async -> Void = {
            await built.server.shutdown()
            for upstream in built.upstreams { await upstream.client.close() }
            await authority.server.shutdown()
            await catalog.stop()
            try? FileManager.default.removeItem(at: directory)
        }
        return RunningProvider(
            provider: Instance(gateway: built, catalog: catalog.provider),
            address: try await built.server.startListening(orCleanUp: stop), values: catalog.values, stop: stop)
    }

    /// The verifier of the gateway.
    static var verifier: ProviderVerifier<Instance> {
        ProviderVerifier(provider: "gateway", states: states, start: start)
    }
}
