import Contracts
import Foundation
import Logging
import RPC
import RPCHTTP2
import ServiceTestSupport
import Synchronization
import Testing

@testable import shopctl

/// shopctl's client against a real in-process HTTP/2 server (our `Router` + `HTTP2Server` on a
/// loopback port) standing in for the gateway: raw bytes both ways, all the call shapes
/// shopctl uses, and the refresh-and-retry over a real connection.
@Suite("GatewayTransport over loopback: raw messages, streams and refresh")
struct GatewayTransportTests {
    /// The fake gateway's state: the valid access token and the refresh calls.
    final class FakeAuth: Sendable {
        private let state = Mutex((access: "access-1", refresh: "refresh-1", refreshCalls: 0))

        /// How many RefreshSession calls arrived.
        var refreshCalls: Int { state.withLock { $0.refreshCalls } }

        /// The user, if `authorization` carries the current access token.
        func check(_ authorization: String?) throws -> UserResponse {
            let current = state.withLock { $0.access }
            guard authorization == "Bearer \(current)" else {
                throw AuthReason.accessTokenExpired.error("The access token has expired.")
            }
            return UserResponse(user: Session.sample(access: "", refresh: "").user)
        }

        /// Rotates the tokens if `token` is the current refresh token.
        func refresh(_ token: String) throws -> Session {
            try state.withLock { state throws(RPCError) -> Session in
                state.refreshCalls += 1
                guard token == state.refresh else { throw AuthReason.refreshTokenReused.error("Reused.") }
                state.access = "access-\(state.refreshCalls + 1)"
                state.refresh = "refresh-\(state.refreshCalls + 1)"
                return Session.sample(access: state.access, refresh: state.refresh)
            }
        }
    }

    /// Serves a router with the few methods the tests call, runs `body` with a gateway client
    /// of it whose credentials hold `access-0`/`refresh-1`, and closes everything.
    private func withServer(_ body: (GatewayClient, FakeAuth) async throws -> Void) async throws {
        let auth = FakeAuth()
        var router = Router()
        router.unary(AuthContract.getCurrentUser) { _, context in try auth.check(context.metadata["authorization"]) }
        router.unary(AuthContract.refreshSession) { request, _ in try auth.refresh(request.refreshToken) }
        router.serverStreaming(BasketContract.watchBasket) { _, writer, context in
            _ = try auth.check(context.metadata["authorization"])
            for version in 1...3 {
                try await writer.write(
                    Basket(items: [], itemCount: version, total: .zero(currency: "USD"), version: version, updatedAt: "t\(version)"))
            }
        }
        router.unary(CatalogContract.listCategories) { _, _ in
            // What the gateway answers when the service behind it is down.
            throw RPCError(code: .unavailable, reason: "UPSTREAM_UNAVAILABLE", message: "catalog-svc is unavailable.")
        }
        router.clientStreaming(CatalogContract.importProducts) { requests, context in
            guard context.metadata[MetadataKey.apiKey] == "admin-key" else {
                throw RPCError(code: .unauthenticated, reason: "MISSING_API_KEY", message: "No key.")
            }
            var created = 0
            for try await _ in requests { created += 1 }
            return ImportProductsResponse(created: created, updated: 0)
        }
        var logger = Logger(label: "shopctl-tests")
        logger.logLevel = .critical
        let server = try HTTP2Server(configuration: ServerConfiguration(host: "127.0.0.1", port: 0), router: router, logger: logger)
        let port = try server.start()
        let address = SocketAddressText(host: "127.0.0.1", port: port)
        let client = try RPCClient(target: address)
        let root = try TestScratch.makeDirectory(prefix: "shopctl-transport")
        let store = CredentialsStore(paths: ConfigPaths(environment: ["XDG_CONFIG_HOME": root.path]))
        var failure: (any Error)?
        do {
            try store.save(StoredCredentials(Session.sample(access: "access-0", refresh: "refresh-1")))
            try await body(GatewayClient(transport: GatewayTransport(client: client, gateway: address), store: store, timeout: .seconds(10)), auth)
        } catch {
            failure = error
        }
        await client.close()
        await server.shutdown()
        try? FileManager.default.removeItem(at: root)
        if let failure { throw failure }
    }

    @Test("an expired token is refreshed over the connection and the call answered, raw bytes intact")
    func unaryRefresh() async throws {
        try await withServer { gateway, auth in
            let reply = try await gateway.unary(AuthContract.getCurrentUser, Empty())
            #expect(reply.message.user.email == "ada@example.com")
            #expect(reply.raw == (try JSONCodec.shared.encode(reply.message)))
            #expect(auth.refreshCalls == 1)
            #expect(try gateway.store.load()?.accessToken == "access-2")
            // The next call goes straight through with the stored token.
            _ = try await gateway.unary(AuthContract.getCurrentUser, Empty())
            #expect(auth.refreshCalls == 1)
        }
    }

    @Test("concurrent calls that all find the token expired share one refresh")
    func concurrentCallsShareRefresh() async throws {
        try await withServer { gateway, auth in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<4 {
                    group.addTask { _ = try await gateway.unary(AuthContract.getCurrentUser, Empty()) }
                }
                try await group.waitForAll()
            }
            #expect(auth.refreshCalls == 1)
        }
    }

    @Test("a watch hands over each message as it arrives, without a deadline")
    func watch() async throws {
        try await withServer { gateway, _ in
            let seen = Mutex<[Int]>([])
            try await gateway.watch(BasketContract.watchBasket, Empty()) { reply in
                seen.withLock { $0.append(reply.message.version) }
            }
            #expect(seen.withLock { $0 } == [1, 2, 3])
        }
    }

    @Test("a client stream sends every message with the metadata given")
    func clientStream() async throws {
        try await withServer { gateway, _ in
            let product = Product(
                title: "P", description: "", category: "c", price: .zero(currency: "USD"), image: "",
                rating: Rating(rate: 0, count: 0), stock: 0)
            var metadata = Metadata()
            metadata.set(MetadataKey.apiKey, "admin-key")
            let reply = try await gateway.clientStreaming(
                CatalogContract.importProducts, Array(repeating: ImportProductsRequest(product: product), count: 5),
                metadata: metadata)
            #expect(reply.message.created == 5)
            await #expect(throws: RPCError.self) {
                try await gateway.clientStreaming(CatalogContract.importProducts, [ImportProductsRequest(product: product)])
            }
        }
    }

    @Test("the gateway's UPSTREAM_UNAVAILABLE stays its answer; no gateway at the address is GATEWAY_UNREACHABLE")
    func gatewayDownIsNotServiceDown() async throws {
        try await withServer { gateway, _ in
            let answered = await #expect(throws: RPCError.self) { try await gateway.unary(CatalogContract.listCategories, Empty()) }
            #expect(answered?.reason == "UPSTREAM_UNAVAILABLE" && answered?.message == "catalog-svc is unavailable.")
        }
        let port = try #require(try FreePorts.take(1).first)
        let address = SocketAddressText(host: "127.0.0.1", port: port)
        let client = try RPCClient(target: address)
        let transport = GatewayTransport(client: client, gateway: address)
        let failure = await #expect(throws: RPCError.self) {
            try await transport.call(path: CatalogContract.listCategories.path, requests: [Data("{}".utf8)], options: CallOptions()) { _ in }
        }
        await client.close()
        #expect(failure?.code == .unavailable && failure?.reason == "GATEWAY_UNREACHABLE", "\(String(describing: failure))")
        #expect(failure?.message == "Cannot reach the gateway at 127.0.0.1:\(port): connection refused.")
    }
}
