import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

@testable import shopctl

/// Which failures of the gateway's connection shopctl retries: a connection never made is the
/// gateway's absence (final), a connection lost before the answer is a plain `UNAVAILABLE`
/// that idempotent methods try again.
@Suite("Gateway retries: a lost connection is retried, a connection never made is final")
struct GatewayRetryTests {
    /// A gateway address for the classification tests.
    private let gateway = SocketAddressText(host: "shop.example", port: 8080)

    @Test(
        "a connection lost before the answer stays a retryable UNAVAILABLE, not GATEWAY_UNREACHABLE",
        arguments: [
            "the server closed the connection", "the connection to shop.example:8080 answered no PING within 20 s",
            "shop.example:8080 is unreachable; reconnecting after backoff.",
        ])
    func lostConnectionIsRetried(message: String) {
        let lost = RPCError(code: .unavailable, reason: "UPSTREAM_UNAVAILABLE", message: message)
        let classified = GatewayFailure.classify(lost, gateway: gateway)
        #expect(classified.code == .unavailable && classified.reason == nil, "\(classified)")
        #expect(classified.message.hasPrefix("The gateway at shop.example:8080 did not answer: "), "\(classified)")
        #expect(CallRetry.standard(for: BasketContract.getBasket.info).isRetryable(classified))
        #expect(CallRetry.placeOrder.isRetryable(classified))
    }

    @Test("a connection never made (its cause a ConnectFailure) is GATEWAY_UNREACHABLE and final")
    func neverConnectedIsFinal() {
        for cause in [ConnectFailure.connectFailed(errno: ECONNREFUSED), .timedOut] {
            let refused = RPCError(code: .unavailable, reason: "UPSTREAM_UNAVAILABLE", message: "cannot connect", cause: cause)
            let classified = GatewayFailure.classify(refused, gateway: gateway)
            #expect(classified.reason == "GATEWAY_UNREACHABLE", "\(cause)")
            #expect(!CallRetry.standard(for: BasketContract.getBasket.info).isRetryable(classified), "\(cause)")
        }
    }

    @Test("GetBasket against a gateway that accepts, then closes every connection gets its 4 attempts")
    func getBasketRetriedOverLostConnections() async throws {
        let listener = try SlammingListener()
        let address = SocketAddressText(host: "127.0.0.1", port: listener.port)
        let client = try RPCClient(target: address, configuration: GlobalOptions.gatewayConnection)
        let root = try TestScratch.makeDirectory(prefix: "shopctl-gateway-retry")
        let store = CredentialsStore(paths: ConfigPaths(environment: ["XDG_CONFIG_HOME": root.path]))
        try store.save(StoredCredentials(Session.sample(access: "access-0", refresh: "refresh-1")))
        let gateway = GatewayClient(transport: GatewayTransport(client: client, gateway: address), store: store, timeout: .seconds(10))
        let failure = await #expect(throws: RPCError.self) { try await gateway.unary(BasketContract.getBasket, Empty()) }
        await client.close()
        await listener.stop()
        try? FileManager.default.removeItem(at: root)
        #expect(failure?.code == .unavailable && failure?.reason == nil, "\(String(describing: failure))")
        #expect(listener.accepted == 4, "\(listener.accepted) connections")
    }

    @Test("the real shopctl: a gateway that drops every connection is retried, then exits 5 as UNAVAILABLE")
    func shopctlRetriesLostConnections() async throws {
        let listener = try SlammingListener()
        let root = try TestScratch.makeDirectory(prefix: "shopctl-gateway-retry")
        defer { try? FileManager.default.removeItem(at: root) }
        let result = try await ShopctlRunner(configHome: root, gateway: "127.0.0.1:\(listener.port)").run(["categories"])
        await listener.stop()
        #expect(result.status == 5, "\(result)")
        #expect(result.errors.hasPrefix("error: UNAVAILABLE: The gateway at 127.0.0.1:\(listener.port) did not answer: "), "\(result)")
        #expect(!result.errors.contains("GATEWAY_UNREACHABLE") && !result.errors.contains("UPSTREAM_UNAVAILABLE"), "\(result)")
        #expect(listener.accepted == 4, "\(listener.accepted) connections")
    }
}
