import Telemetry

/// catalog-svc's domain metrics (issue 31): stock reservations given back.
///
/// A reservation never expires here: order-svc releases the stock of every placement that
/// did not end paid (and of a paid order cancelled), the call itself or its recovery pass. So
/// the stock coming back is counted where it happens, each reservation once — `ReleaseStock`
/// is idempotent, and a repeat gives nothing back. Under `--no-metrics` the counter lives in a
/// registry nobody reads. Thread-safe: the counter is an atomic.
struct CatalogMetrics: Sendable {
    /// `catalog_reservations_released_total`: reservations whose stock was given back.
    private let reservationsReleased: Counter

    /// The metrics, registered in `registry` (a throwaway one when nil).
    init(registry: MetricsRegistry?) {
        let registry = registry ?? MetricsRegistry()
        reservationsReleased = registry.counter(
            "catalog_reservations_released_total",
            help: "Stock reservations given back (orders declined, failed or cancelled), each once.")
    }

    /// Counts one reservation given back.
    func countReservationReleased() { reservationsReleased.increment() }
}
