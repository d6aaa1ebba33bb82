import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing

@testable import shopctl

/// `order place` sends one idempotency key per invocation, on every retry.
@Suite("order place: one idempotency key, reused on every retry")
struct PlaceOrderRetryTests {
    private static let request = PlaceOrderRequest(
        shippingAddress: Address(name: "Ada", line1: "1 Main St", city: "Springfield", postalCode: "12345", country: "US"),
        payment: CardDetails(cardNumber: "4242424242424242", expMonth: 12, expYear: 2030, cvc: "123"))

    private static let order = Order(
        id: "order-1", status: .paid, items: [], total: .zero(currency: "USD"), shippingAddress: request.shippingAddress,
        createdAt: "2026-01-01T00:00:00Z", updatedAt: "2026-01-01T00:00:00Z")

    /// A gateway over `transport` with a signed-in session, in a fresh directory.
    private func gateway(_ transport: ScriptedTransport) throws -> (GatewayClient, URL) {
        let root = try TestScratch.makeDirectory(prefix: "shopctl-place")
        let store = CredentialsStore(paths: ConfigPaths(environment: ["XDG_CONFIG_HOME": root.path]))
        try store.save(StoredCredentials(Session.sample(access: "access-0", refresh: "refresh-0")))
        return (GatewayClient(transport: transport, store: store, timeout: .seconds(5)), root)
    }

    @Test("retries after UNAVAILABLE, REQUEST_IN_PROGRESS and a token refresh with the same key")
    func sameKeyOnEveryAttempt() async throws {
        let transport = ScriptedTransport { call, number in
            if call.path == AuthContract.refreshSession.path {
                return [try .json(Session.sample(access: "access-1", refresh: "refresh-1"))]
            }
            switch number {
            case 1: throw RPCError(code: .unavailable, reason: "UPSTREAM_UNAVAILABLE", message: "order-svc is down.")
            case 2: throw OrderReason.requestInProgress.error("The same order is being placed.")
            case 3: throw AuthReason.accessTokenExpired.error("The access token has expired.")
            default: return [try .json(Self.order)]
            }
        }
        let (gateway, root) = try gateway(transport)
        defer { try? FileManager.default.removeItem(at: root) }
        let reply = try await OrderCommand.place(Self.request, gateway: gateway)
        #expect(reply.message == Self.order)
        let attempts = transport.recorded(OrderContract.placeOrder.path)
        #expect(attempts.count == 4)
        let keys = attempts.map { $0.metadata[OrderContract.idempotencyKeyHeader] }
        #expect(Set(keys).count == 1)
        let key = try #require(keys.first ?? nil)
        #expect(UUID(uuidString: key) != nil)
        #expect(attempts.allSatisfy { $0.requests == attempts[0].requests })
        #expect(attempts.last?.metadata["authorization"] == "Bearer access-1")
    }

    @Test("two invocations use two keys")
    func newKeyPerInvocation() async throws {
        let transport = ScriptedTransport { _, _ in [try .json(Self.order)] }
        let (gateway, root) = try gateway(transport)
        defer { try? FileManager.default.removeItem(at: root) }
        _ = try await OrderCommand.place(Self.request, gateway: gateway)
        _ = try await OrderCommand.place(Self.request, gateway: gateway)
        let keys = transport.recorded.compactMap { $0.metadata[OrderContract.idempotencyKeyHeader] }
        #expect(keys.count == 2)
        #expect(Set(keys).count == 2)
    }

    @Test(
        "a refusal is not retried",
        arguments: [
            OrderReason.paymentDeclined.error("Declined."), OrderReason.emptyBasket.error("Empty."),
            RPCError(code: .aborted, reason: "VERSION_CONFLICT", message: "Conflict."),
            RPCError(code: .internal, message: "Internal error."),
        ])
    func refusalsAreFinal(error: RPCError) async throws {
        let transport = ScriptedTransport { _, _ in throw error }
        let (gateway, root) = try gateway(transport)
        defer { try? FileManager.default.removeItem(at: root) }
        let thrown = await #expect(throws: RPCError.self) { try await OrderCommand.place(Self.request, gateway: gateway) }
        #expect(thrown?.reason == error.reason)
        #expect(transport.recorded.count == 1)
    }

    @Test("gives up after five attempts of a failure that lasts")
    func givesUp() async throws {
        let transport = ScriptedTransport { _, _ in throw RPCError(code: .unavailable, message: "Down.") }
        let (gateway, root) = try gateway(transport)
        defer { try? FileManager.default.removeItem(at: root) }
        await #expect(throws: RPCError.self) { try await OrderCommand.place(Self.request, gateway: gateway) }
        #expect(transport.recorded.count == 5)
        #expect(Set(transport.recorded.map { $0.metadata[OrderContract.idempotencyKeyHeader] }).count == 1)
    }

    @Test("other non-idempotent methods are sent once; idempotent ones retried on UNAVAILABLE")
    func standardRetries() async throws {
        let transport = ScriptedTransport { call, number in
            if number < 3 { throw RPCError(code: .unavailable, message: "Down.") }
            return [Data("{\"categories\":[]}".utf8)]
        }
        let (gateway, root) = try gateway(transport)
        defer { try? FileManager.default.removeItem(at: root) }
        await #expect(throws: RPCError.self) {
            try await gateway.unary(BasketContract.addItem, AddItemRequest(productId: 1))
        }
        #expect(transport.recorded(BasketContract.addItem.path).count == 1)
        let categories = try await gateway.unary(CatalogContract.listCategories, Empty())
        #expect(categories.message.categories.isEmpty)
        #expect(transport.recorded(CatalogContract.listCategories.path).count == 3)
    }

    @Test("the gateway's UPSTREAM_UNAVAILABLE is final even for idempotent methods: it has retried already")
    func upstreamUnavailableIsFinal() async throws {
        let transport = ScriptedTransport { _, _ in
            throw GatewayReason.upstreamUnavailable.error("basket-svc is unavailable right now; try again shortly.")
        }
        let (gateway, root) = try gateway(transport)
        defer { try? FileManager.default.removeItem(at: root) }
        let error = await #expect(throws: RPCError.self) { try await gateway.unary(BasketContract.getBasket, Empty()) }
        #expect(error?.reason == GatewayReason.upstreamUnavailable.rawValue)
        #expect(transport.recorded(BasketContract.getBasket.path).count == 1)
    }
}
