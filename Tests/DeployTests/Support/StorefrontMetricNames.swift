/// The metric families Storefront's processes serve on `/metrics`, as issue 31's plan names
/// them (the lead's metrics spec): what a dashboard or an alert may query. A family renamed in
/// the code must be renamed here too, and then in every query that names it.
enum StorefrontMetricNames {
    /// The histograms: each is queried as `NAME_bucket`, `NAME_sum` or `NAME_count`.
    static let histograms: Set<String> = [
        "rpc_server_call_duration_seconds", "rpc_server_request_size_bytes", "rpc_server_response_size_bytes",
        "rpc_client_call_duration_seconds", "rpc_client_request_size_bytes", "rpc_client_response_size_bytes",
        "storage_query_duration_seconds", "storage_transaction_duration_seconds", "storage_pool_wait_seconds",
    ]

    /// The counters and gauges, queried by their own names.
    static let scalars: Set<String> = [
        // Every process: calls, what is in flight, the process itself.
        "rpc_server_calls_started_total", "rpc_server_calls_total", "rpc_client_calls_started_total", "rpc_client_calls_total",
        "rpc_server_connections_open", "rpc_server_calls_in_flight", "rpc_server_answer_bytes_held", "rpc_server_streams_open", "rpc_client_calls_waiting",
        "process_cpu_seconds_total", "process_resident_memory_bytes", "process_virtual_memory_bytes", "process_open_fds",
        "process_max_fds", "process_start_time_seconds", "storefront_build_info",
        // The gateway.
        "gateway_upstream_replica_up", "gateway_upstream_breaker_open", "gateway_upstream_retries_total",
        "gateway_rate_limited_total", "gateway_calls_by_protocol_total", "gateway_watches_open", "gateway_upstream_healthy",
        // Storage.
        "storage_sqlite_wal_bytes", "storage_postgresql_connections", "storage_commits_total", "storage_transaction_retries_total",
        // The services' own.
        "auth_sign_ups_total", "auth_sign_ins_total", "auth_mails_total", "order_orders_total", "order_refunds_total",
        "catalog_reservations_released_total", "basket_watchers_open", "auth_watchers_open",
        // Span export.
        "otlp_spans_exported_total", "otlp_spans_dropped_total", "otlp_export_failures_total",
    ]

    /// Series Prometheus makes itself for every target (`up`, `scrape_duration_seconds` …):
    /// no process serves them, yet a dashboard may query them.
    static let prometheusSeries: Set<String> = [
        "up", "scrape_duration_seconds", "scrape_samples_scraped", "scrape_samples_post_metric_relabeling", "scrape_series_added",
    ]

    /// The family a series name belongs to (`x_bucket` → `x` for a histogram `x`), or nil when
    /// the name is none of Storefront's.
    static func family(of series: String) -> String? {
        if scalars.contains(series) || histograms.contains(series) { return series }
        for suffix in ["_bucket", "_sum", "_count"] where series.hasSuffix(suffix) {
            let family = String(series.dropLast(suffix.count))
            if histograms.contains(family) { return family }
        }
        return nil
    }
}
