import Telemetry

/// basket-svc's domain metrics (issue 31): the open `WatchBasket` streams, read from the hub
/// that holds them when scraped, so no handler counts and a stream that ends in any way
/// (cancelled, revoked, shut down) is gone from the figure with its hub entry.
enum BasketMetrics {
    /// Registers `basket_watchers_open` in `registry` (nothing under `--no-metrics`).
    static func register(in registry: MetricsRegistry?, hub: BasketHub) {
        registry?.sampled(
            "basket_watchers_open", type: .gauge, help: "WatchBasket streams open in this process."
        ) { Double(hub.watcherCount) }
    }
}
