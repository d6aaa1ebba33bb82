@testable import auth_svc
@testable import basket_svc
@testable import catalog_svc
import ContractTesting
import Contracts
import Foundation
@testable import gateway
import Logging
@testable import order_svc
import RPC
import RPCHTTP2
import ServiceKit
import ServiceTestSupport
import Storage
import JSON

/// The gateway as a provider (of shopctl's contract): built in-process by `GatewayServer.build`
/// in front of the real services, each built in-process by its own `build` on a scratch data
/// directory — auth-svc (which signs the tokens everyone verifies, with Google and Apple
/// sign-in configured against ServiceTestSupport's ``IdentityProviderKeys``), catalog-svc (seeded), basket-svc and
/// order-svc (which call catalog-svc and basket-svc for real). The services share one internal
/// key, as a deployment does. The states (`GatewayProvider+States.swift`) are set up in the
/// services' own stores.
enum GatewayProvider {
    /// A running gateway and the services behind it.
    struct Instance: Sendable {
        /// The gateway.
        let gateway: GatewayServer
        /// auth-svc.
        let auth: AuthServer
        /// auth-svc's data directory, where its signing key is.
        let authDirectory: URL
        /// catalog-svc.
        let catalog: CatalogServer
        /// basket-svc.
        let basket: BasketServer
        /// order-svc.
        let order: OrderServer
    }

    /// The scrypt cost of the auth-svc under test: low, since nobody attacks it.
    static let scryptLogN = 10

    /// What is started so far, stopped in reverse order; an error stops it all.
    private struct Started {
        /// How to stop each thing started, in the order started.
        var stops: [@Sendable () async -> Void] = []

        /// Runs every stop, the last started first.
        func stopAll() async {
            for stop in stops.reversed() { await stop() }
        }
    }

    /// Starts a fresh stack: every service, then the gateway in front of them.
    static func start() async throws -> RunningProvider<Instance> {
        var started = Started()
        do {
            let root = try TestScratch.makeDirectory(prefix: "contract-provider-gateway")
            started.stops.append { try? FileManager.default.removeItem(at: root) }
            let internalKey = TestScratch.randomKey()
            func dataDirectory(_ name: String) throws -> URL {
                let directory = root.appendingPathComponent(name)
                try ServiceMain.prepareDataDirectory(directory.path)
                try internalKey.write(to: directory.appendingPathComponent("internal-api-key"), atomically: true, encoding: .utf8)
                return directory
            }
            let quiet = ContractLogging.quiet

            let authDirectory = try dataDirectory("auth")
            let auth = try await AuthServer.build(
                configuration: AuthConfiguration(
                    port: 0, dataDirectory: authDirectory.path,
                    providers: try identityProviders(keySetsIn: root),
                    hashThreads: 1, scryptLogN: scryptLogN, internalKey: internalKey, gracePeriod: .seconds(2), databaseURL: try await TestBackend.newDatabaseURL()),
                logger: quiet)
            started.stops.append {
                await auth.server.shutdown()
                await auth.core.close()
            }
            let authAddress = try auth.server.listen()
            var authLink = AuthLinkOptions()
            // Every @Option must be assigned: read unparsed, swift-argument-parser traps.
            authLink.authAddr = authAddress.description
            authLink.authIssuer = TestAuthority.issuer
            authLink.authAudience = TestAuthority.audience

            let catalogDirectory = try dataDirectory("catalog")
            let catalog = try await CatalogServer.build(
                configuration: CatalogConfiguration(
                    port: 0, dataDirectory: catalogDirectory.path, auth: authLink, gracePeriod: .seconds(2), databaseURL: try await TestBackend.newDatabaseURL()),
                logger: quiet)
            started.stops.append {
                await catalog.server.shutdown()
                await catalog.auth.client.close()
                await catalog.store.database.close()
            }
            let catalogAddress = try catalog.server.listen()

            let basket = try await BasketServer.build(
                configuration: BasketConfiguration(
                    port: 0, dataDirectory: try dataDirectory("basket").path, authTarget: UpstreamTarget(authAddress),
                    catalogTarget: UpstreamTarget(catalogAddress), internalKey: internalKey, gracePeriod: .seconds(2), databaseURL: try await TestBackend.newDatabaseURL()),
                logger: quiet)
            started.stops.append {
                await basket.server.shutdown()
                await basket.catalogClient.close()
                await basket.authLink.client.close()
                await basket.store.database.close()
            }
            let basketAddress = try basket.server.listen()

            let order = try await OrderServer.build(
                configuration: OrderConfiguration(
                    port: 0, dataDirectory: try dataDirectory("order").path, auth: authLink, catalogTarget: UpstreamTarget(catalogAddress),
                    basketTarget: UpstreamTarget(basketAddress), gracePeriod: .seconds(2), databaseURL: try await TestBackend.newDatabaseURL()),
                logger: quiet)
            started.stops.append {
                await order.server.shutdown()
                await order.auth.client.close()
                await order.service.basket.close()
                await order.service.catalog.close()
                await order.service.store.database.close()
            }
            let orderAddress = try order.server.listen()

            let gateway = try GatewayServer.build(
                configuration: GatewayConfiguration(
                    port: 0, dataDirectory: try dataDirectory("gateway").path, auth: authLink, catalogTarget: UpstreamTarget(catalogAddress),
                    basketTarget: UpstreamTarget(basketAddress), orderTarget: UpstreamTarget(orderAddress), gracePeriod: .seconds(2)),
                logger: quiet)
            started.stops.append {
                await gateway.server.shutdown()
                for upstream in gateway.upstreams { await upstream.close() }
            }
            let address = try gateway.server.listen()

            let adminKey = try ServiceSecret.resolve(
                environmentName: "SHOP_ADMIN_API_KEY", path: catalogDirectory.appendingPathComponent("admin-api-key").path)
            let stops = started
            return RunningProvider(
                provider: Instance(
                    gateway: gateway, auth: auth, authDirectory: authDirectory, catalog: catalog, basket: basket, order: order),
                address: address, values: ["adminKey": .string(adminKey)], stop: { await stops.stopAll() })
        } catch {
            await started.stopAll()
            throw error
        }
    }

    /// auth-svc's Google and Apple sign-in, trusting ``IdentityProviderKeys``: their JWK Sets
    /// written into `directory`, the client ids those of ``IDTokens``.
    private static func identityProviders(keySetsIn directory: URL) throws -> [ProviderConfiguration] {
        let keySets = try IdentityProviderKeys.shared.get().writeKeySets(into: directory)
        return [
            .google(clientIDs: [IDTokens.googleClientID], jwks: keySets.google.path),
            .apple(clientIDs: [IDTokens.appleClientID], jwks: keySets.apple.path),
        ]
    }

    /// The verifier of the gateway.
    static var verifier: ProviderVerifier<Instance> {
        ProviderVerifier(provider: "gateway", states: states, start: start)
    }
}

extension HTTP2Server {
    /// Starts listening on a free loopback port and returns its address (the caller's
    /// clean-up stops the server when anything later fails).
    fileprivate func listen() throws -> SocketAddressText {
        SocketAddressText(host: "127.0.0.1", port: try start())
    }
}
