import Contracts
import RPC
import Telemetry

/// order-svc's domain metrics (issue 31): placements by how they ended, and refunds.
///
/// Each placement is counted once, when its end is committed: by the call placing it, or by
/// the recovery pass settling what a failure left — never both, since recovery only takes
/// orders at an unfinished step, and a stored answer replayed for a retried key is not
/// counted again. Every series is registered when the service is built; under
/// `--no-metrics` the counters live in a registry nobody reads. Thread-safe: counters are
/// atomics and the table never changes.
struct OrderMetrics: Sendable {
    /// How a placement ended.
    enum Outcome: String, Sendable, CaseIterable {
        /// Charged and recorded `PAID`.
        case paid
        /// The card was declined; the order stays `PAYMENT_FAILED`.
        case declined
        /// Answered `OUT_OF_STOCK`: too little stock, or a product no longer sold.
        case outOfStock = "out_of_stock"
        /// Answered with another refusal stored for the key (empty basket, mixed currencies,
        /// a total or price that cannot be ordered).
        case rejected
        /// Undone after a failure (an upstream or the database), by the call or by recovery:
        /// nothing charged, nothing reserved, the key free for a retry.
        case failed
    }

    /// `order_orders_total{outcome}`, by outcome.
    private let orders: [Outcome: Counter]
    /// `order_refunds_total`: paid orders cancelled and refunded.
    private let refunds: Counter

    /// The metrics, registered in `registry` (a throwaway one when nil).
    init(registry: MetricsRegistry?) {
        let registry = registry ?? MetricsRegistry()
        var orders: [Outcome: Counter] = [:]
        for outcome in Outcome.allCases {
            orders[outcome] = registry.counter(
                "order_orders_total", help: "PlaceOrder placements by how they ended, each counted once.",
                labels: ["outcome": outcome.rawValue])
        }
        self.orders = orders
        refunds = registry.counter("order_refunds_total", help: "Paid orders cancelled and refunded.")
    }

    /// Counts one placement ending in `outcome`.
    func countOrder(_ outcome: Outcome) { orders[outcome]?.increment() }

    /// Counts one paid order cancelled and refunded.
    func countRefund() { refunds.increment() }

    /// Counts one placement answered with the stored refusal `error`.
    func countRefusal(_ error: RPCError) {
        countOrder(error.reason == OrderReason.outOfStock.rawValue ? .outOfStock : .rejected)
    }
}
