import Telemetry
import Testing

/// What ``MetricsRegistry`` writes: escapes done byte by byte, durations of any sign, and
/// which series show.
@Suite("Metrics registry")
struct MetricsRegistryTests {
    @Test("label values and help are escaped byte by byte: a CR LF, a quote under a combining mark, a backslash")
    func escapes() throws {
        let registry = MetricsRegistry()
        let value = "a\r\nb\"\u{301}c\\d"
        registry.counter("test_escapes_total", help: "line one\r\nline two \\", labels: ["value": value]).increment()
        let text = registry.exposition()
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.contains { $0 == "# HELP test_escapes_total line one\r\\nline two \\\\" })
        #expect(lines.contains { $0 == "test_escapes_total{value=\"a\r\\nb\\\"\u{301}c\\\\d\"} 1" }, "\(text)")
        let parsed = try MetricsParser.parse(text)
        #expect(parsed.samples.first { $0.name == "test_escapes_total" }?.labels["value"] == value)
    }

    @Test("a negative duration counts as zero, in the first bucket, without trapping")
    func negativeDurations() {
        let registry = MetricsRegistry()
        let histogram = registry.histogram("test_seconds", help: "Durations.", buckets: .durations)
        histogram.observe(Duration.nanoseconds(-500))
        histogram.observe(Duration.seconds(-3))
        let (cumulative, sum) = histogram.snapshot()
        #expect(cumulative.first == 2 && cumulative.last == 2 && sum == 0)
    }

    @Test("a method's code counts and histograms show once the method is called, from zero; OK always")
    func visibility() {
        let registry = MetricsRegistry()
        let metrics = RPCCallMetrics(side: .server, paths: ["/s.v1.S/Called", "/s.v1.S/Idle"], registry: registry)
        metrics.method(path: "/s.v1.S/Called").start()
        let text = registry.exposition()
        #expect(text.contains("rpc_server_calls_total{service=\"s.v1.S\",method=\"Called\",code=\"INTERNAL\"} 0"))
        #expect(text.contains("rpc_server_call_duration_seconds_count{service=\"s.v1.S\",method=\"Called\"} 0"))
        #expect(!text.contains("method=\"Idle\",code=\"INTERNAL\""))
        #expect(text.contains("rpc_server_calls_total{service=\"s.v1.S\",method=\"Idle\",code=\"OK\"} 0"))
        #expect(!text.contains("rpc_server_call_duration_seconds_count{service=\"s.v1.S\",method=\"Idle\"}"))
        // A path no method has is counted under _OTHER, never under its own name.
        metrics.method(path: "/made.up/Path").start()
        #expect(registry.exposition().contains("rpc_server_calls_started_total{service=\"_OTHER\",method=\"_OTHER\"} 1"))
        #expect(!registry.exposition().contains("made.up"))
    }
}
