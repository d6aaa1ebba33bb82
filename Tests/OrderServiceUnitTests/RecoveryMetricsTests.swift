import Contracts
import ServiceTestSupport
import Telemetry
import Testing

@testable import order_svc

/// The recovery pass counts in `order_orders_total` what it settles, once: an order a failure
/// left charged is counted paid when recovery records it so, and not again on the next pass;
/// an order it cannot undo yet (its catalog unreachable) is not counted until it is.
@Suite("Recovery pass: order metrics")
struct RecoveryMetricsTests {
    /// `order_orders_total{outcome}` in `registry` now.
    static func orders(_ outcome: String, in registry: MetricsRegistry) -> Double? {
        MetricsScrape(exposition: registry.exposition()).value("order_orders_total{outcome=\"\(outcome)\"}")
    }

    @Test("an order left charged is counted paid once by recovery; one left reserved is not counted while it cannot be undone")
    func countsSettledOrdersOnce() async throws {
        try await StoreBackend.sqlite.withStore { store in
            let registry = MetricsRegistry()
            let service = try RecoverySnapshotTests.service(store, registry: registry)
            _ = try await store.claim(userID: "u1", key: "k1", requestHash: "h")
            try await store.insertClaimed(IdempotencyStoreTests.order("o1", user: "u1", key: "k1", step: "charged"))
            _ = try await store.claim(userID: "u1", key: "k2", requestHash: "h")
            try await store.insertClaimed(IdempotencyStoreTests.order("o2", user: "u1", key: "k2", step: "reserved"))

            #expect(await service.recover() == 1)
            #expect(await service.recover() == 0)
            #expect(try await store.order(id: "o1")?.order.status == .paid)
            #expect(try await store.order(id: "o2")?.step == "reserved")
            #expect(Self.orders("paid", in: registry) == 1)
            #expect(Self.orders("failed", in: registry) == 0)
        }
    }
}
