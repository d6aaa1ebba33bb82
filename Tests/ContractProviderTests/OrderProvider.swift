import ContractTesting
import Contracts
import Foundation
@testable import order_svc
import RPC
import RPCHTTP2
import ServiceKit
import ServiceTestSupport
import Storage
import Testing
import JSON

/// order-svc as a provider: its server built in-process by `OrderServer.build`, verifying
/// tokens with the contract tests' key (``TestAuthority``), its basket-svc and catalog-svc
/// played by mocks from order-svc's own contracts — so what the gateway's contract asks of
/// order-svc is checked against what order-svc's upstreams promise to answer.
enum OrderProvider {
    /// The state hooks.
    static var states: ProviderStates<OrderServer> {
        var states = ProviderStates<OrderServer>()
        states.add("a signed-in user") { _, params in
            let userID = try (params["userId"] ?? .null).decoded(as: String.self)
            return ["accessToken": .string(try TestAuthority.accessToken(userID: userID)), "userId": .string(userID)]
        }
        return states
    }

    /// The interactions of order-svc's contract with basket-svc that its mock answers: a paid order's path.
    static let basketInteractions = ["GetBasket of a basket with two lines", "ClearBasket at the version the order was priced from"]
    /// The same, of its contract with catalog-svc.
    static let catalogInteractions = [
        "BatchGetProducts of the products in the basket", "ReserveStock for an order the stock covers",
        "ReleaseStock of an order's reservation",
    ]

    /// Starts a fresh order-svc with its upstreams.
    static func start() async throws -> RunningProvider<OrderServer> {
        let directory = try TestScratch.makeDirectory(prefix: "contract-provider-order")
        let authority = try TestAuthority.startServer()
        var mocks: [MockProvider] = []
        let server: OrderServer
        do {
            let basketContract = try #require(try ContractFiles.load(consumer: "order-svc", provider: "basket-svc"))
            let catalogContract = try #require(try ContractFiles.load(consumer: "order-svc", provider: "catalog-svc"))
            mocks.append(try MockProvider.start(playing: basketContract, only: basketInteractions))
            mocks.append(try MockProvider.start(playing: catalogContract, only: catalogInteractions))
            // Every @Option must be assigned: read unparsed, swift-argument-parser traps.
            var auth = AuthLinkOptions()
            auth.authAddr = authority.address.description
            auth.authIssuer = TestAuthority.issuer
            auth.authAudience = TestAuthority.audience
            server = try await OrderServer.build(
                configuration: OrderConfiguration(
                    port: 0, dataDirectory: directory.path, auth: auth, catalogTarget: UpstreamTarget(mocks[1].address),
                    basketTarget: UpstreamTarget(mocks[0].address), gracePeriod: .seconds(2), databaseURL: try await TestBackend.newDatabaseURL()),
                logger: ContractLogging.quiet)
        } catch {
            for mock in mocks { await mock.stop() }
            await authority.server.shutdown()
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        let upstreams = mocks
        let stop: @Sendable () async -> Void = {
            await server.server.shutdown()
            await server.auth.client.close()
            await server.service.basket.close()
            await server.service.catalog.close()
            await server.service.store.database.close()
            for mock in upstreams { await mock.finish(requireEveryInteraction: false) }
            await authority.server.shutdown()
            try? FileManager.default.removeItem(at: directory)
        }
        return RunningProvider(provider: server, address: try await server.server.startListening(orCleanUp: stop), stop: stop)
    }

    /// The verifier of order-svc.
    static var verifier: ProviderVerifier<OrderServer> {
        ProviderVerifier(provider: "order-svc", states: states, start: start)
    }
}
