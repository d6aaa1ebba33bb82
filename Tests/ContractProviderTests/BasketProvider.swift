@testable import basket_svc
import ContractTesting
import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceKit
import ServiceTestSupport
import Storage
import Testing
import JSON

/// basket-svc as a provider: its server built in-process by `BasketServer.build`, verifying
/// tokens with the contract tests' key (``TestAuthority``), and the states of its consumers'
/// contracts set through its store.
enum BasketProvider {
    /// The state hooks.
    static var states: ProviderStates<BasketServer> {
        var states = ProviderStates<BasketServer>()
        states.add("a signed-in user") { _, params in
            let userID = try (params["userId"] ?? .null).decoded(as: String.self)
            return ["accessToken": .string(try TestAuthority.accessToken(userID: userID)), "userId": .string(userID)]
        }
        states.add("the user's basket holds") { server, params in
            let userID = try (params["userId"] ?? .null).decoded(as: String.self)
            for item in try (params["items"] ?? .null).decoded(as: [BasketItem].self) {
                _ = try await server.store.add(
                    LineRecord(
                        id: item.id, productID: item.productId, title: item.productTitle, unitAmount: item.unitPrice.amount,
                        currency: item.unitPrice.currency, imageURL: item.imageURL, count: item.count),
                    userID: userID)
            }
            return [:]
        }
        states.add("a product is added to the user's basket") { server, params in
            // Mid-stream, for WatchBasket: as AddItem does, the change is committed, then
            // published to the user's watchers.
            let userID = try (params["userId"] ?? .null).decoded(as: String.self)
            let item = try (params["item"] ?? .null).decoded(as: BasketItem.self)
            let basket = try await server.store.add(LineRecord(item), userID: userID)
            server.hub.publish(basket.message, userID: userID)
            return [:]
        }
        return states
    }

    /// Starts a fresh basket-svc with a ``TestAuthority`` server as its auth-svc and, as its
    /// catalog-svc, a mock playing what basket-svc's own contract says catalog-svc answers.
    static func start() async throws -> RunningProvider<BasketServer> {
        let directory = try TestScratch.makeDirectory(prefix: "contract-provider-basket")
        let authority = try TestAuthority.startServer()
        let catalog: MockProvider
        let server: BasketServer
        do {
            let contract = try #require(try ContractFiles.load(consumer: "basket-svc", provider: "catalog-svc"))
            catalog = try MockProvider.start(playing: contract, only: ["GetProduct of a product in the catalog"])
            server = try await BasketServer.build(
                configuration: BasketConfiguration(
                    port: 0, dataDirectory: directory.path, authTarget: UpstreamTarget(authority.address),
                    catalogTarget: UpstreamTarget(catalog.address), internalKey: TestScratch.randomKey(), gracePeriod: .seconds(2), databaseURL: try await TestBackend.newDatabaseURL()),
                logger: ContractLogging.quiet)
        } catch {
            await authority.server.shutdown()
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        let stop: @Sendable () async -> Void = {
            await server.server.shutdown()
            await server.catalogClient.close()
            await server.authLink.client.close()
            await server.store.database.close()
            await catalog.finish(requireEveryInteraction: false)
            await authority.server.shutdown()
            try? FileManager.default.removeItem(at: directory)
        }
        return RunningProvider(provider: server, address: try await server.server.startListening(orCleanUp: stop), stop: stop)
    }

    /// The verifier of basket-svc.
    static var verifier: ProviderVerifier<BasketServer> {
        ProviderVerifier(provider: "basket-svc", states: states, start: start)
    }
}
