import Foundation
import Testing

/// deploy/grafana/storefront.json, the dashboard of Storefront's metrics: it imports into any
/// Grafana (its data source is a variable, it loads nothing from elsewhere), every panel's
/// query names only metrics the processes serve (issue 31's names), and it shows what the
/// issue asks: calls, errors and durations per service, the upstreams' health, orders,
/// watchers and the processes.
@Suite("Grafana dashboard")
struct GrafanaDashboardTests {
    /// The dashboard file.
    static let file = "deploy/grafana/storefront.json"
    /// The data source every panel and query names: the dashboard's variable of that name.
    static let dataSourceUID = "${DS_PROMETHEUS}"

    /// One query of a panel.
    struct Query: Sendable {
        /// The panel's title.
        let panel: String
        /// The PromQL expression.
        let expression: String
    }

    /// The dashboard as parsed JSON.
    static func dashboard() throws -> [String: Any] {
        let data = try Data(contentsOf: Repository.url(file))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(file) is not a JSON object")
    }

    /// Every panel but the rows, those nested in collapsed rows included.
    static func panels(of dashboard: [String: Any]) -> [[String: Any]] {
        let top = dashboard["panels"] as? [[String: Any]] ?? []
        return top.flatMap { panel -> [[String: Any]] in
            panel["type"] as? String == "row" ? (panel["panels"] as? [[String: Any]] ?? []) : [panel]
        }
    }

    /// Every query of every panel.
    static func queries(of dashboard: [String: Any]) -> [Query] {
        panels(of: dashboard).flatMap { panel in
            (panel["targets"] as? [[String: Any]] ?? []).map {
                Query(panel: panel["title"] as? String ?? "?", expression: $0["expr"] as? String ?? "")
            }
        }
    }

    /// Every string anywhere in `json`.
    static func strings(in json: Any) -> [String] {
        switch json {
        case let text as String: [text]
        case let array as [Any]: array.flatMap(strings(in:))
        case let object as [String: Any]: object.flatMap { [$0.key] + strings(in: $0.value) }
        default: []
        }
    }

    @Test("the data source is a datasource variable DS_PROMETHEUS, which every panel and query uses")
    func dataSourceIsAVariable() throws {
        let dashboard = try Self.dashboard()
        let variables = (dashboard["templating"] as? [String: Any])?["list"] as? [[String: Any]] ?? []
        let source = try #require(variables.first { $0["name"] as? String == "DS_PROMETHEUS" }, "no variable DS_PROMETHEUS")
        #expect(source["type"] as? String == "datasource" && source["query"] as? String == "prometheus", "\(source)")
        let panels = Self.panels(of: dashboard)
        #expect(!panels.isEmpty)
        for panel in panels {
            let title = panel["title"] as? String ?? "?"
            #expect((panel["datasource"] as? [String: Any])?["uid"] as? String == Self.dataSourceUID, "panel \(title)")
            let targets = panel["targets"] as? [[String: Any]] ?? []
            #expect(!targets.isEmpty, "panel \(title) has no query")
            for target in targets {
                #expect((target["datasource"] as? [String: Any])?["uid"] as? String == Self.dataSourceUID, "a query of \(title)")
            }
        }
        let ids = panels.compactMap { $0["id"] as? Int }
        #expect(ids.count == panels.count && Set(ids).count == ids.count, "panel ids are missing or repeat: \(ids)")
    }

    @Test("nothing is fetched when it is shown: no URL anywhere in it")
    func loadsNothingFromElsewhere() throws {
        let addresses = Self.strings(in: try Self.dashboard()).filter { $0.contains("://") }
        #expect(addresses.isEmpty, "the dashboard names addresses: \(addresses)")
    }

    @Test("every query names only metrics Storefront serves (or Prometheus's own series)")
    func queriesNameKnownMetrics() throws {
        let queries = Self.queries(of: try Self.dashboard())
        #expect(!queries.isEmpty)
        for query in queries {
            let names = PromQLNames.series(in: query.expression)
            #expect(!names.isEmpty, "\(query.panel): \(query.expression) selects no series")
            for name in names where StorefrontMetricNames.family(of: name) == nil {
                #expect(StorefrontMetricNames.prometheusSeries.contains(name), "\(query.panel): \(name) is no metric of Storefront's")
            }
        }
    }

    @Test("it shows rate, errors and p50/p99 per service, upstream health, orders, watchers, CPU and memory")
    func showsWhatTheIssueAsks() throws {
        let expressions = Self.queries(of: try Self.dashboard()).map(\.expression)
        /// Whether some query contains every one of `parts`.
        func some(_ parts: String...) -> Bool { expressions.contains { query in parts.allSatisfy(query.contains) } }
        #expect(some("rate(rpc_server_calls_total", "by (job)"), "no calls per service")
        #expect(some("rpc_server_calls_total", #"code!="OK""#), "no errors (code other than OK)")
        for quantile in ["0.5", "0.99"] {
            #expect(some("histogram_quantile(\(quantile),", "rpc_server_call_duration_seconds_bucket", "le)"), "no p\(quantile) duration")
        }
        for metric in [
            "gateway_upstream_replica_up", "gateway_upstream_breaker_open", "order_orders_total", "basket_watchers_open",
            "process_cpu_seconds_total", "process_resident_memory_bytes",
        ] {
            #expect(some(metric), "no panel shows \(metric)")
        }
        #expect(some("order_orders_total", "by (outcome)"), "orders are not shown by outcome")
    }

    @Test("the query reader finds series and skips functions, labels, strings, ranges, groupings and numbers")
    func queryReaderFindsSeries() {
        #expect(
            PromQLNames.series(in: #"histogram_quantile(0.99, sum by (job, le) (rate(a_bucket{job=~"$job", code!="x{y}"}[5m])))"#)
                == ["a_bucket"])
        #expect(PromQLNames.series(in: "sum(rate(b_total[1m])) by (method) / on (job) group_left c * 1e3 and bool d") == ["b_total", "c", "d"])
        #expect(PromQLNames.series(in: "up == 1") == ["up"])
    }
}
