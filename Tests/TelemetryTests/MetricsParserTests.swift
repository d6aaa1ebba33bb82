import RPC
import Telemetry
import Testing

/// Prometheus's text format read back: what our registry writes, and what other exporters may.
@Suite("MetricsParser: Prometheus text format 0.0.4")
struct MetricsParserTests {
    @Test("help, type, comments, blank lines, escapes, special values and timestamps")
    func page() throws {
        let text = """
            # A comment that is neither HELP nor TYPE.

            # HELP http_requests_total Requests served,\\nby path and \\\\ code.
            # TYPE http_requests_total counter
            http_requests_total{path="/a\\"b\\\\c\\nd",code="200"} 1027 1395066363000
            http_requests_total{ path = "/" , code="500", } 3
            \t  temperature\t-12.5e-1
            # TYPE up gauge
            up +Inf
            down -Inf
            unknown NaN
            metric_without_timestamp_and_labels 12.47
            colons:are:allowed{} 1e3
            """
        let parsed = try MetricsParser.parse(text)
        #expect(parsed.samples.count == 8)
        let first = parsed.samples[0]
        #expect(first.name == "http_requests_total")
        #expect(first.labels == MetricLabels([("path", "/a\"b\\c\nd"), ("code", "200")]))
        #expect(first.value == 1027)
        #expect(first.timestamp == 1_395_066_363_000)
        #expect(parsed.samples[1].labels == MetricLabels([("path", "/"), ("code", "500")]))
        #expect(parsed.samples[1].labels["code"] == "500")
        #expect(parsed.samples[1].labels["method"] == nil)
        #expect(parsed.samples[2] == MetricSample(name: "temperature", value: -1.25))
        #expect(parsed.samples[3].value == .infinity)
        #expect(parsed.samples[4].value == -.infinity)
        #expect(parsed.samples[5].value.isNaN)
        #expect(parsed.samples[7] == MetricSample(name: "colons:are:allowed", value: 1000))
        #expect(parsed.samples(named: "http_requests_total").count == 2)
        let family = try #require(parsed.families["http_requests_total"])
        #expect(family.type == "counter")
        #expect(family.help == "Requests served,\nby path and \\ code.")
        #expect(parsed.families["up"]?.type == "gauge")
        #expect(parsed.families["up"]?.help == nil)
        #expect(parsed.families["temperature"] == nil)
    }

    @Test("an empty page has no samples")
    func emptyPage() throws {
        #expect(try MetricsParser.parse("").samples.isEmpty)
        #expect(try MetricsParser.parse("\n\n# just a comment\n").samples.isEmpty)
    }

    @Test(
        "a malformed line is refused with its number and what is wrong",
        arguments: [
            ("ok 1\nbad{code=\"200} 1\n", 2, "closing quote"),
            ("a 1\nb 2\n3c 4", 3, "expected a metric name"),
            ("x{code=200} 1", 1, "no quoted value"),
            ("x{code} 1", 1, "expected '='"),
            ("x{code=\"1\" path=\"/\"} 1", 1, "expected ',' or '}'"),
            ("x{__name__=\"y\"} 1", 1, "bad label name"),
            ("x{a=\"1\",a=\"2\"} 1", 1, "label a twice"),
            ("x", 1, "x has no value"),
            ("x one", 1, "bad value 'one'"),
            ("x 1 soon", 1, "bad timestamp 'soon'"),
            ("x 1 2 3", 1, "text after the sample"),
            ("# TYPE x counter\n# TYPE x gauge", 2, "second # TYPE"),
            ("# HELP x a\n# HELP x b", 2, "second # HELP"),
            ("# TYPE x thing", 1, "unknown type 'thing'"),
            ("x 1\n# TYPE x gauge", 2, "after its samples"),
            ("x_bucket{le=\"1\"} 1\n# TYPE x histogram", 2, "after its samples"),
            ("# TYPE", 1, "without a metric name"),
        ])
    func malformed(text: String, line: Int, reason: String) {
        let error = #expect(throws: MetricsParseError.self) { try MetricsParser.parse(text) }
        #expect(error?.line == line, "\(text)")
        #expect(error?.reason.contains(reason) == true, "\(String(describing: error))")
        #expect(error?.description.hasPrefix("line \(line): ") == true)
    }

    @Test("a gauge named like a histogram's count does not stop a later family's # TYPE")
    func suffixedNamesOfOtherTypes() throws {
        let parsed = try MetricsParser.parse("queue_count 3\n# TYPE queue gauge\nqueue 1\n")
        #expect(parsed.families["queue"]?.type == "gauge")
        #expect(parsed.samples.map(\.name) == ["queue_count", "queue"])
    }

    @Test("the registry's exposition parses back to what was recorded: counters, escaped labels, histograms")
    func roundTrip() throws {
        let registry = MetricsRegistry()
        registry.counter("jobs_total", help: "Jobs done.\nAll of them \\ every one.").increment(by: 7)
        let tricky = "a \"quoted\" \\ back\nslash"
        registry.counter("lookups_total", help: "Lookups by key.", labels: ["key": tricky, "kind": "plain"]).increment(by: 3)
        registry.counter("lookups_total", help: "Lookups by key.", labels: ["key": "", "kind": "empty"]).increment()
        registry.gauge("open_things", help: "Things open.").set(-4)
        let sizes = registry.histogram(
            "payload_bytes", help: "Payload sizes.", buckets: HistogramBuckets(bounds: [10, 100], scale: 1), labels: ["route": "x"])
        for size: UInt64 in [1, 10, 11, 50, 100, 1000] { sizes.observe(size) }

        let parsed = try MetricsParser.parse(registry.exposition())

        #expect(parsed.families["jobs_total"]?.type == "counter")
        #expect(parsed.families["jobs_total"]?.help == "Jobs done.\nAll of them \\ every one.")
        #expect(parsed.samples(named: "jobs_total") == [MetricSample(name: "jobs_total", value: 7)])
        #expect(
            parsed.samples(named: "lookups_total") == [
                MetricSample(name: "lookups_total", labels: ["key": tricky, "kind": "plain"], value: 3),
                MetricSample(name: "lookups_total", labels: ["key": "", "kind": "empty"], value: 1),
            ])
        #expect(parsed.samples(named: "open_things") == [MetricSample(name: "open_things", value: -4)])
        #expect(parsed.families["payload_bytes"]?.type == "histogram")
        #expect(
            parsed.samples(named: "payload_bytes_bucket") == [
                MetricSample(name: "payload_bytes_bucket", labels: ["route": "x", "le": "10"], value: 2),
                MetricSample(name: "payload_bytes_bucket", labels: ["route": "x", "le": "100"], value: 5),
                MetricSample(name: "payload_bytes_bucket", labels: ["route": "x", "le": "+Inf"], value: 6),
            ])
        #expect(parsed.samples(named: "payload_bytes_sum") == [MetricSample(name: "payload_bytes_sum", labels: ["route": "x"], value: 1172)])
        #expect(parsed.samples(named: "payload_bytes_count") == [MetricSample(name: "payload_bytes_count", labels: ["route": "x"], value: 6)])
        let buckets = HistogramQuantile.buckets(named: "payload_bytes", in: parsed.samples, matching: ["route": "x"])
        #expect(buckets.map(\.cumulativeCount) == [2, 5, 6])
        #expect(buckets.map(\.upperBound) == [10, 100, .infinity])
    }

    @Test("RPC call metrics read back as calls by code and a duration histogram in seconds")
    func rpcCallMetricsRoundTrip() throws {
        let registry = MetricsRegistry()
        let path = "/shop.catalog.v1.CatalogService/GetProduct"
        let metrics = RPCCallMetrics(side: .server, paths: [path], registry: registry)
        let method = metrics.method(path: path)
        for _ in 0..<3 { method.finish(code: nil, duration: .microseconds(300), requestBytes: 10, responseBytes: 100) }
        method.finish(code: .notFound, duration: .milliseconds(20), requestBytes: 10, responseBytes: 0)

        let parsed = try MetricsParser.parse(registry.exposition())

        let calls = parsed.samples(named: "rpc_server_calls_total").filter { $0.labels["method"] == "GetProduct" }
        #expect(calls.map { $0.labels["code"] ?? "" }.sorted() == ["NOT_FOUND", "OK"])
        #expect(calls.first { $0.labels["code"] == "OK" }?.value == 3)
        #expect(calls.first { $0.labels["code"] == "NOT_FOUND" }?.labels["service"] == "shop.catalog.v1.CatalogService")
        let buckets = HistogramQuantile.buckets(
            named: "rpc_server_call_duration_seconds", in: parsed.samples, matching: ["method": "GetProduct"])
        #expect(buckets.last?.cumulativeCount == 4)
        // Three calls in (250 µs, 500 µs], one in (10 ms, 25 ms].
        #expect(HistogramQuantile.quantile(0.5, of: buckets) > 0.00025)
        #expect(HistogramQuantile.quantile(0.5, of: buckets) <= 0.0005)
        #expect(HistogramQuantile.quantile(0.99, of: buckets) > 0.01)
        #expect(HistogramQuantile.quantile(0.99, of: buckets) <= 0.025)
    }
}
