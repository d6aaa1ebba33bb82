@testable import catalog_svc
import ContractTesting
import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceKit
import ServiceTestSupport
import Storage
import JSON

/// catalog-svc as a provider: its server built in-process by `CatalogServer.build` on a
/// scratch data directory, and the states its consumers' contracts name, set through its store.
enum CatalogProvider {
    /// The state hooks.
    static var states: ProviderStates<CatalogServer> {
        var states = ProviderStates<CatalogServer>()
        states.add("a product exists") { server, params in
            let product = try JSONValue.object(params).decoded(as: Product.self)
            _ = try await server.store.upsert(product)
            return ["productId": .number(Double(product.id))]
        }
        states.add("no product has the id") { server, params in
            let id = try (params["id"] ?? .null).decoded(as: Int.self)
            _ = try await server.store.delete(id: id)
            return ["productId": .number(Double(id))]
        }
        states.add("a signed-in user") { _, params in
            let userID = try (params["userId"] ?? .null).decoded(as: String.self)
            return ["accessToken": .string(try TestAuthority.accessToken(userID: userID)), "userId": .string(userID)]
        }
        states.add("the user favors a product") { server, params in
            let userID = try (params["userId"] ?? .null).decoded(as: String.self)
            let productID = try (params["productId"] ?? .null).decoded(as: Int.self)
            _ = try await server.store.addFavorite(userID: userID, productID: productID)
            return [:]
        }
        states.add("a reservation exists") { server, params in
            let reservation = try JSONValue.object(params).decoded(as: ReserveStockRequest.self)
            let outcome = try await server.store.reserve(
                reservationID: reservation.reservationId,
                counts: Dictionary(reservation.items.map { ($0.productId, $0.count) }, uniquingKeysWith: +))
            guard outcome == .reserved else { throw ContractError("cannot reserve \(reservation): \(outcome)") }
            return ["reservationId": .string(reservation.reservationId)]
        }
        return states
    }

    /// Starts a fresh catalog-svc (seeded, as a real first start is) verifying tokens with the
    /// ``TestAuthority`` key; its keys are the values `internalKey` and `adminKey`.
    static func start() async throws -> RunningProvider<CatalogServer> {
        let directory = try TestScratch.makeDirectory(prefix: "contract-provider-catalog")
        let authority = try TestAuthority.startServer()
        // Every @Option must be assigned: read unparsed, swift-argument-parser traps.
        var auth = AuthLinkOptions()
        auth.authAddr = authority.address.description
        auth.authIssuer = TestAuthority.issuer
        auth.authAudience = TestAuthority.audience
        let server: CatalogServer
        do {
            server = try await CatalogServer.build(
                configuration: CatalogConfiguration(
                    port: 0, dataDirectory: directory.path, auth: auth, gracePeriod: .seconds(2), databaseURL: try await TestBackend.newDatabaseURL()),
                logger: ContractLogging.quiet)
        } catch {
            await authority.server.shutdown()
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        let stop: @Sendable () async -> Void = {
            await server.server.shutdown()
            await server.auth.client.close()
            await server.store.database.close()
            await authority.server.shutdown()
            try? FileManager.default.removeItem(at: directory)
        }
        let address = try await server.server.startListening(orCleanUp: stop)
        do {
            let internalKey = try ServiceSecret.resolve(
                environmentName: "SHOP_INTERNAL_API_KEY", path: directory.appendingPathComponent("internal-api-key").path)
            let adminKey = try ServiceSecret.resolve(
                environmentName: "SHOP_ADMIN_API_KEY", path: directory.appendingPathComponent("admin-api-key").path)
            return RunningProvider(
                provider: server, address: address,
                values: ["internalKey": .string(internalKey), "adminKey": .string(adminKey)], stop: stop)
        } catch {
            await stop()
            throw error
        }
    }

    /// The verifier of catalog-svc.
    static var verifier: ProviderVerifier<CatalogServer> {
        ProviderVerifier(provider: "catalog-svc", states: states, start: start)
    }
}
