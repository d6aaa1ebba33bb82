@testable import basket_svc
@testable import catalog_svc
import Contracts
@testable import gateway
import ContractTesting
import Foundation
@testable import order_svc
import RPCHTTP2
import ServiceKit
import ServiceTestSupport
import Storage
import RPC

/// A consumer service built in-process exactly as its executable builds it (its `build`
/// function), listening on a free loopback port, with its upstreams pointed at mock providers
/// and a scratch data directory; ``stop()`` shuts it down and removes the directory.
struct ServiceUnderTest: Sendable {
    /// Where it listens.
    let address: SocketAddressText
    /// Polls its revocation feed once (the `RevocationFeed` every service runs).
    let pollRevocations: @Sendable () async throws -> Void
    /// Whether its feed has learned that `sessionID` was revoked.
    let isRevoked: @Sendable (String) -> Bool
    private let shutdown: @Sendable () async -> Void
    private let directory: URL

    /// Stops the server, closes its clients and database, removes its data directory.
    func stop() async {
        await shutdown()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs `body` with a client of the service, then closes the client and stops the
    /// service, whether `body` threw or not.
    @discardableResult
    func use<Result>(_ body: (RPCClient) async throws -> Result) async throws -> Result {
        let client: RPCClient
        do {
            client = try RPCClient(target: address)
        } catch {
            await stop()
            throw error
        }
        do {
            let result = try await body(client)
            await client.close()
            await stop()
            return result
        } catch {
            await client.close()
            await stop()
            throw error
        }
    }

    /// A data directory holding the internal key the tests know.
    private static func dataDirectory(_ name: String) throws -> URL {
        let directory = try TestScratch.makeDirectory(prefix: "contract-\(name)")
        try TestAuthority.internalKey.write(
            to: directory.appendingPathComponent("internal-api-key"), atomically: true, encoding: .utf8)
        return directory
    }

    /// The auth link flags pointing at `auth`; every one is assigned, since
    /// swift-argument-parser traps on reading an unparsed default.
    private static func authOptions(_ auth: SocketAddressText) -> AuthLinkOptions {
        var options = AuthLinkOptions()
        options.authAddr = auth.description
        options.authIssuer = TestAuthority.issuer
        options.authAudience = TestAuthority.audience
        return options
    }

    /// Starts `server` listening and wraps it: `closeRest` closes what was built around it
    /// (clients, database) after the server shuts down, and `authLink` is the link whose
    /// revocation feed the tests drive. When listening fails, everything is released and
    /// `directory` removed before the error is rethrown.
    private static func serving(
        _ server: HTTP2Server, authLink: AuthServiceLink, directory: URL,
        closingAfterwards closeRest: @escaping @Sendable () async -> Void
    ) async throws -> ServiceUnderTest {
        let shutdown: @Sendable () async -> Void = {
            await server.shutdown()
            await closeRest()
        }
        let address = try await server.startListening {
            await shutdown()
            try? FileManager.default.removeItem(at: directory)
        }
        let revocations = authLink.revocations
        return ServiceUnderTest(
            address: address, pollRevocations: { try await revocations.poll() },
            isRevoked: { revocations.isRevoked(sessionID: $0) }, shutdown: shutdown, directory: directory)
    }

    /// basket-svc with auth-svc and catalog-svc at the given addresses.
    static func basket(auth: SocketAddressText, catalog: SocketAddressText) async throws -> ServiceUnderTest {
        let directory = try dataDirectory("basket")
        let built = try await BasketServer.build(
            configuration: BasketConfiguration(
                port: 0, dataDirectory: directory.path, authTarget: UpstreamTarget(auth), catalogTarget: UpstreamTarget(catalog),
                internalKey: TestAuthority.internalKey, gracePeriod: .seconds(2), databaseURL: try await TestBackend.newDatabaseURL()),
            logger: ContractLogging.quiet)
        return try await serving(built.server, authLink: built.authLink, directory: directory) {
            await built.catalogClient.close()
            await built.authLink.client.close()
            await built.store.database.close()
        }
    }

    /// order-svc with auth-svc, basket-svc and catalog-svc at the given addresses.
    static func order(
        auth: SocketAddressText, basket: SocketAddressText, catalog: SocketAddressText
    ) async throws -> ServiceUnderTest {
        let directory = try dataDirectory("order")
        let built = try await OrderServer.build(
            configuration: OrderConfiguration(
                port: 0, dataDirectory: directory.path, auth: authOptions(auth), catalogTarget: UpstreamTarget(catalog),
                basketTarget: UpstreamTarget(basket), gracePeriod: .seconds(2), databaseURL: try await TestBackend.newDatabaseURL()),
            logger: ContractLogging.quiet)
        return try await serving(built.server, authLink: built.auth, directory: directory) {
            await built.auth.client.close()
            await built.service.basket.close()
            await built.service.catalog.close()
            await built.service.store.database.close()
        }
    }

    /// The gateway with every upstream at the given addresses.
    static func gateway(
        auth: SocketAddressText, catalog: SocketAddressText, basket: SocketAddressText, order: SocketAddressText
    ) async throws -> ServiceUnderTest {
        let directory = try dataDirectory("gateway")
        let built = try GatewayServer.build(
            configuration: GatewayConfiguration(
                port: 0, dataDirectory: directory.path, auth: authOptions(auth), catalogTarget: UpstreamTarget(catalog),
                basketTarget: UpstreamTarget(basket), orderTarget: UpstreamTarget(order), gracePeriod: .seconds(2)),
            logger: ContractLogging.quiet)
        return try await serving(built.server, authLink: built.auth, directory: directory) {
            for upstream in built.upstreams { await upstream.close() }
        }
    }

    /// catalog-svc with auth-svc at `auth`.
    static func catalog(auth: SocketAddressText) async throws -> ServiceUnderTest {
        let directory = try dataDirectory("catalog")
        let built = try await CatalogServer.build(
            configuration: CatalogConfiguration(
                port: 0, dataDirectory: directory.path, auth: authOptions(auth), gracePeriod: .seconds(2), databaseURL: try await TestBackend.newDatabaseURL()),
            logger: ContractLogging.quiet)
        return try await serving(built.server, authLink: built.auth, directory: directory) {
            await built.auth.client.close()
            await built.store.database.close()
        }
    }
}
