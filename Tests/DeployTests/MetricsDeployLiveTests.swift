import Contracts
import Foundation
import ServiceTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Storefront's metrics as an operator runs them: every process's `/metrics` passes
/// Prometheus's own checker, deploy/prometheus.yml and the dashboard's queries are ones
/// Prometheus accepts, and `deploy/compose up --metrics` runs Debian's prometheus on loopback,
/// scraping every instance compose started (replicas included) and counting the calls a
/// journey through the gateway made. prometheus and promtool are required, not optional:
/// Tests/run installs them (deploy/requirements.sh).
@Suite("Metrics under deploy/compose and Prometheus", .serialized)
struct MetricsDeployLiveTests {
    /// What `instance` and `job` Prometheus gives a target: compose's instance name without
    /// its replica (`catalog-svc@2` → `catalog-svc`), and its address.
    struct Target: Hashable, Sendable, CustomStringConvertible {
        /// The scrape job: the service, or prometheus.
        let job: String
        /// `127.0.0.1:port`.
        let instance: String

        var description: String { "\(job)/\(instance)" }
    }

    /// The port of a status row's `127.0.0.1:port`.
    static func port(of row: ComposeSystem.Row) throws -> Int {
        try #require(row.address.split(separator: ":").last.flatMap { Int($0) }, "no port in \(row.address)")
    }

    /// The jobs of a Prometheus configuration and the file_sd files each reads (PyYAML).
    static func scrapeJobs(of path: String) async throws -> [String: [String]] {
        let script = """
            import json, sys, yaml
            config = yaml.safe_load(open(sys.argv[1]))
            print(json.dumps({job["job_name"]: [f for sd in job.get("file_sd_configs", []) for f in sd["files"]]
                              for job in config["scrape_configs"]}))
            """
        let result = try await Command.run("python3", ["-c", script, path], timeout: .seconds(60))
        try #require(result.status == 0, "reading \(path): \(result)")
        return try JSONDecoder().decode([String: [String]].self, from: Data(result.output.utf8))
    }

    @Test("deploy/prometheus.yml passes promtool; one job per service and one for prometheus, each reading the targets compose writes for it")
    func prometheusConfiguration() async throws {
        let path = Repository.url("deploy/prometheus.yml").path
        let check = try await Promtool.checkConfig(path)
        #expect(check.status == 0 && check.output.contains("SUCCESS"), "\(check)")
        let jobs = try await Self.scrapeJobs(of: path)
        #expect(Set(jobs.keys) == Set(StorefrontServices.names + ["prometheus"]), "jobs: \(jobs.keys.sorted())")
        for (job, files) in jobs { #expect(files == ["targets/\(job).json"], "\(job) reads \(files)") }
    }

    @Test("every query of the Grafana dashboard parses as PromQL (promtool), its variables given values")
    func dashboardQueriesParse() async throws {
        let expressions = GrafanaDashboardTests.queries(of: try GrafanaDashboardTests.dashboard()).map { query in
            query.expression.replacingOccurrences(of: "$__rate_interval", with: "1m")
                .replacingOccurrences(of: "$__range", with: "1h").replacingOccurrences(of: "$job", with: ".+")
        }
        #expect(!expressions.isEmpty)
        let check = try await Promtool.checkExpressions(expressions)
        #expect(check.status == 0, "\(check)")
    }

    /// Whether a Swift source of Shared/ or Services/ holds the string literal `"name"`.
    static func sourcesName(_ name: String) throws -> Bool {
        let literal = "\"\(name)\""
        for directory in ["Shared", "Services"] {
            let files = FileManager.default.enumerator(at: Repository.url(directory), includingPropertiesForKeys: nil)?
                .compactMap { $0 as? URL } ?? []
            for file in files where file.pathExtension == "swift" {
                if try String(contentsOf: file, encoding: .utf8).contains(literal) { return true }
            }
        }
        return false
    }

    @Test("promtool accepts every process's /metrics, served over HTTP/1.1 in the text format")
    func everyProcessPassesPromtool() async throws {
        try await withComposeSystem { system in
            let up = try await system.run("up")
            try #require(up.status == 0, "up failed: \(up)")
            let rows = try await system.status()
            #expect(rows.map(\.name) == system.services)
            for row in rows {
                let page = try await MetricsScrape.fetch(port: try Self.port(of: row))
                #expect(page.status == 200, "\(row.name): GET /metrics answered \(page.status)")
                #expect(page.contentType == MetricsScrape.textFormat, "\(row.name): content type \(page.contentType ?? "none")")
                // compose's own health checks are calls like any other, counted per method.
                let checks = page.lines(
                    of: "rpc_server_calls_total", labeled: ["service": "grpc.health.v1.Health", "method": "Check", "code": "OK"])
                #expect(checks.count == 1, "\(row.name) counts no health check: \(checks)")
                let check = try await Promtool.checkMetrics(page.text)
                #expect(check.status == 0, "\(row.name): promtool check metrics: \(check)")
            }
        }
    }

    @Test("every metric the Grafana dashboard queries is served by a process after a journey, or is a counter the sources name")
    func dashboardMetricsAreServed() async throws {
        try await withComposeSystem { system in
            let up = try await system.run("up")
            try #require(up.status == 0, "up failed: \(up)")
            // Calls through the gateway: its client side counts too.
            _ = try await Self.catalogJourney(through: try ComposeShop(system: system))
            var served: Set<String> = []
            for row in try await system.status() {
                served.formUnion(try await MetricsScrape.fetch(port: try Self.port(of: row)).families)
            }
            let queried = GrafanaDashboardTests.queries(of: try GrafanaDashboardTests.dashboard())
                .flatMap { PromQLNames.series(in: $0.expression) }.compactMap(StorefrontMetricNames.family(of:))
            // A counter with labels is written once it counted (an order's outcome, a retry): one
            // that no process serves yet must at least be one the sources name.
            for family in Set(queried) where !served.contains(family) {
                let named = family.hasSuffix("_total") ? try Self.sourcesName(family) : false
                #expect(named, "the dashboard queries \(family), which no process serves and no source names")
            }
        }
    }

    @Test("up --postgres --metrics: prometheus on loopback scrapes every instance, replicas included, and counts a journey's calls by method")
    func prometheusScrapesCompose() async throws {
        let prometheusPort = try FreePorts.take(1)[0]
        let environment = ["SHOP_PROMETHEUS_PORT": String(prometheusPort), "SHOP_METRICS_SCRAPE_INTERVAL": "1s"]
        try await withComposeSystem(environment: environment, portBase: ComposeReplicasLiveTests.portBase(), slots: 10) { system in
            let up = try await system.run("up", "--postgres", "--metrics", timeout: .seconds(300))
            try #require(up.status == 0, "up --postgres --metrics failed: \(up)")
            #expect(up.output.contains("http://127.0.0.1:\(prometheusPort)/"), "up names no prometheus: \(up.output)")
            let rows = try await system.status()
            let prometheusRow = try system.row("prometheus", in: rows)
            #expect(rows.last?.name == "prometheus" && rows.allSatisfy { $0.status == "serving" }, "\(rows)")
            #expect(prometheusRow.address == "127.0.0.1:\(prometheusPort)")
            #expect(rows.contains { $0.name == "catalog-svc@2" }, "no replicas run: \(rows.map(\.name))")
            let prometheus = PrometheusAPI(port: prometheusPort)
            #expect(try await prometheus.get("/api/v1/status/config").contains("scrape_interval: 1s"), "SHOP_METRICS_SCRAPE_INTERVAL was not applied")

            let calls = try await Self.catalogJourney(through: try ComposeShop(system: system))
            try await Self.expectEveryTargetUp(rows, in: prometheus)
            try await Self.expectCounted(calls, in: prometheus)
            try await Self.expectRestartedAfterKill(prometheusRow, system: system, prometheus: prometheus)

            let down = try await system.run("down", timeout: .seconds(120))
            #expect(down.status == 0 && down.output.contains("stopped prometheus"), "\(down)")
        }
    }

    @Test("a scrape interval that is no duration is refused before anything starts")
    func badScrapeIntervalIsRefused() async throws {
        try await withComposeSystem(environment: ["SHOP_METRICS_SCRAPE_INTERVAL": "soon"]) { system in
            let refused = try await system.run("up", "--metrics")
            #expect(refused.status == 2 && refused.errors.contains("SHOP_METRICS_SCRAPE_INTERVAL=soon"), "\(refused)")
            #expect(try await system.status().allSatisfy { $0.status == "stopped" })
        }
    }

    /// Through the gateway: two products made (admin `UpsertProduct`), each read back three
    /// times and one id that does not exist read once (`NOT_FOUND`). Returns how many calls of
    /// each (method, code) it made.
    static func catalogJourney(through shop: ComposeShop) async throws -> [String: Int] {
        defer { Task { await shop.close() } }
        var calls: [String: Int] = [:]
        for title in ["metered backpack", "metered lamp"] {
            let product = try await shop.createProduct(title: title)
            calls["UpsertProduct OK", default: 0] += 1
            for _ in 0..<3 {
                #expect(try await shop.product(product.id) != nil)
                calls["GetProduct OK", default: 0] += 1
            }
        }
        #expect(try await shop.product(987_654_321) == nil)
        calls["GetProduct NOT_FOUND", default: 0] += 1
        return calls
    }

    /// Waits (a minute at most: discovery, then a scrape) until `up` has one series per
    /// instance of `rows` — job and address — each 1.
    static func expectEveryTargetUp(_ rows: [ComposeSystem.Row], in prometheus: PrometheusAPI) async throws {
        let expected = Set(rows.map { Target(job: String($0.name.split(separator: "@")[0]), instance: $0.address) })
        var seen: [PrometheusAPI.Sample] = []
        let allUp = try await eventually(within: .seconds(60), every: .seconds(1)) {
            seen = try await prometheus.query("up")
            let targets = Set(seen.map { Target(job: $0.metric["job"] ?? "", instance: $0.metric["instance"] ?? "") })
            return targets == expected && seen.allSatisfy { $0.value.value == 1 }
        }
        #expect(allUp, "up is not 1 for exactly \(expected.sorted { $0.description < $1.description }): \(seen)")
    }

    /// Waits until Prometheus's `rpc_server_calls_total` of CatalogService, summed over each
    /// job's instances, counts exactly `calls` on the gateway (which served them) and on
    /// catalog-svc (whose replicas the gateway passed each on to once).
    static func expectCounted(_ calls: [String: Int], in prometheus: PrometheusAPI) async throws {
        let query = #"sum by (job, method, code) (rpc_server_calls_total{service="\#(CatalogContract.service)", method=~"GetProduct|UpsertProduct"})"#
        var counted: [String: [String: Int]] = [:]
        let agrees = try await eventually(within: .seconds(30), every: .seconds(1)) {
            counted = [:]
            // A called method shows every code from zero: the codes it never answered are left out here.
            for sample in try await prometheus.query(query) where sample.value.value > 0 {
                let key = "\(sample.metric["method"] ?? "?") \(sample.metric["code"] ?? "?")"
                counted[sample.metric["job"] ?? "?", default: [:]][key] = Int(sample.value.value)
            }
            return counted["gateway"] == calls && counted["catalog-svc"] == calls
        }
        #expect(agrees, "prometheus counts \(counted), the journey made \(calls) through the gateway")
    }

    /// Kills prometheus outright: its supervisor starts it again, on the same data, and it is
    /// ready once more.
    static func expectRestartedAfterKill(
        _ row: ComposeSystem.Row, system: ComposeSystem, prometheus: PrometheusAPI
    ) async throws {
        let killed = try #require(row.pid, "prometheus has no pid")
        #expect(kill(Int32(killed), SIGKILL) == 0)
        var after = row
        let back = try await eventually(within: .seconds(60), every: .milliseconds(500)) {
            after = try system.row("prometheus", in: try await system.status())
            return after.pid != nil && after.pid != killed && after.status == "serving"
        }
        #expect(back && after.restarts == 1, "prometheus did not come back: \(after)")
        #expect(try await !prometheus.query("up").isEmpty, "the restarted prometheus answers no query")
    }
}
