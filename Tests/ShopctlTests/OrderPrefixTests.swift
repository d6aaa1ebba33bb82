import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing

@testable import shopctl

/// `order show` and `order cancel` take an order id or a unique prefix of 8 characters or
/// more, found through `ListOrders` pages (a bounded number of them).
@Suite("orders by a unique prefix of their id")
struct OrderPrefixTests {
    /// An order with id `id`.
    private static func order(_ id: String) -> Order {
        Order(
            id: id, status: .paid, items: [], total: .zero(currency: "USD"),
            shippingAddress: Address(name: "Ada", line1: "1 Main St", city: "Springfield", postalCode: "1", country: "US"),
            createdAt: "2026-01-01T00:00:00Z", updatedAt: "2026-01-01T00:00:00Z")
    }

    /// Orders in pages of two: page N answers `pages[N]`, each page but the last with a next token.
    private static func transport(_ pages: [[String]]) -> ScriptedTransport {
        ScriptedTransport { call, _ in
            let request = try JSONCodec.shared.decode(ListOrdersRequest.self, from: call.requests[0])
            let index = Int(request.pageToken ?? "0") ?? 0
            let next = index + 1 < pages.count ? String(index + 1) : ""
            return [try .json(ListOrdersResponse(orders: pages[index].map(order), nextPageToken: next))]
        }
    }

    /// Resolves `reference` through `transport` with a signed-in session in a fresh directory.
    private func resolve(_ reference: String, through transport: ScriptedTransport) async throws -> String {
        let root = try TestScratch.makeDirectory(prefix: "shopctl-order-prefix")
        defer { try? FileManager.default.removeItem(at: root) }
        let store = CredentialsStore(paths: ConfigPaths(directory: root))
        try store.save(StoredCredentials(Session.sample(access: "access-0", refresh: "refresh-0")))
        return try await OrderCommand.resolveOrder(
            reference, gateway: GatewayClient(transport: transport, store: store, timeout: .seconds(5)))
    }

    private static let pages = [
        ["9f0c1d2e-1111-4000-8000-000000000001", "56edd6eb-2222-4000-8000-000000000002"],
        ["56edd6eb-3333-4000-8000-000000000003", "0a1b2c3d-4444-4000-8000-000000000004"],
    ]

    @Test("a unique prefix on a later page is found, in any case")
    func uniquePrefix() async throws {
        let transport = Self.transport(Self.pages)
        #expect(try await resolve("0A1B2C3D", through: transport) == "0a1b2c3d-4444-4000-8000-000000000004")
        #expect(transport.recorded(OrderContract.listOrders.path).count == 2)
    }

    @Test("a whole id is sent as it is, without listing")
    func wholeID() async throws {
        let transport = Self.transport(Self.pages)
        #expect(try await resolve("9f0c1d2e-1111-4000-8000-000000000001", through: transport) == "9f0c1d2e-1111-4000-8000-000000000001")
        #expect(transport.recorded.isEmpty)
    }

    @Test("a prefix shorter than 8 characters is a usage error, before any call")
    func tooShort() async throws {
        let transport = Self.transport(Self.pages)
        let error = await #expect(throws: ShopctlError.self) { try await resolve("56edd6e", through: transport) }
        #expect(error?.status == .usage)
        #expect(error?.message.contains("at least 8 characters") == true)
        #expect(transport.recorded.isEmpty)
    }

    @Test("an ambiguous prefix is a usage error saying how many orders match")
    func ambiguous() async throws {
        let error = await #expect(throws: ShopctlError.self) { try await resolve("56edd6eb", through: Self.transport(Self.pages)) }
        #expect(error?.status == .usage)
        #expect(error?.message == "2 of your orders have ids starting with 56edd6eb.")
    }

    @Test("the search stops at the second match: later pages cannot make the prefix unique")
    func ambiguousStopsPaging() async throws {
        let transport = Self.transport(Self.pages + [["56edd6eb-5555-4000-8000-000000000005"], ["77777777-6666-4000-8000-000000000006"]])
        let error = await #expect(throws: ShopctlError.self) { try await resolve("56EDD6EB", through: transport) }
        #expect(error?.status == .usage)
        #expect(error?.message == "At least 2 of your orders have ids starting with 56EDD6EB.")
        #expect(transport.recorded(OrderContract.listOrders.path).count == 2)
    }

    @Test("a prefix of no order is ORDER_NOT_FOUND")
    func noMatch() async throws {
        let error = await #expect(throws: ShopctlError.self) { try await resolve("ffffffff", through: Self.transport(Self.pages)) }
        #expect(error?.reason == "ORDER_NOT_FOUND")
        #expect(error?.message == "None of your orders has an id starting with ffffffff.")
        #expect(error?.status == .rejected)
    }

    @Test("the search reads a bounded number of pages however many the server offers")
    func bounded() async throws {
        let endless = ScriptedTransport { _, number in
            [try .json(ListOrdersResponse(orders: [Self.order(UUID().uuidString.lowercased())], nextPageToken: "p\(number)"))]
        }
        let error = await #expect(throws: ShopctlError.self) { try await resolve("ffffffff", through: endless) }
        #expect(endless.recorded.count == OrderCommand.searchPageLimit)
        // It says what it did not search: a miss among the newest orders only.
        #expect(error?.reason == "ORDER_NOT_FOUND")
        #expect(error?.message == "None of your newest 5000 orders has an id starting with ffffffff; older ones were not searched.")
        let sizes = try endless.recorded.map { try JSONCodec.shared.decode(ListOrdersRequest.self, from: $0.requests[0]).pageSize }
        #expect(sizes.allSatisfy { $0 == OrderCommand.searchPageSize })
    }
}
