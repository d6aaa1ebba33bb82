import ArgumentParser
import Foundation
import RPC
import RPCHTTP2
import Telemetry
@testable import ServiceKit
import Testing

/// The server-limit flags every service takes (``ServiceOptions/serverLimits(defaultTimeout:)``).
@Suite("Service options: server limits")
struct ServiceOptionsTests {
    @Test("byte counts take K, M and G for KiB, MiB and GiB, and nothing else",
          arguments: [("4M", 4 << 20), ("262144", 262_144), ("64k", 64 << 10), ("1G", 1 << 30)] as [(String, Int)])
    func byteCounts(text: String, bytes: Int) {
        #expect(ServiceOptions.byteCount(text) == bytes)
    }

    @Test("malformed byte counts are refused", arguments: ["", "M", "4 M", "4MB", "-1", "x", "99999999999999999999G"])
    func malformedByteCounts(text: String) {
        #expect(ServiceOptions.byteCount(text) == nil)
    }

    @Test("the defaults: 30 s for a call without a deadline (the given one for the gateway), 16 MiB per connection, 64 MiB per process")
    func defaults() throws {
        let options = try ServiceOptions.parse([])
        let limits = options.serverLimits()
        #expect(limits.defaultUnaryTimeout == .seconds(30))
        #expect(limits.answerBuffer.perConnection == 16 << 20)
        #expect(limits.answerBuffer.perProcess == 64 << 20)
        #expect(options.serverLimits(defaultTimeout: .seconds(10)).defaultUnaryTimeout == .seconds(10))
    }

    @Test("the flags set every limit")
    func flags() throws {
        let options = try ServiceOptions.parse([
            "--default-timeout-ms", "1500", "--answer-buffer-per-connection", "1M", "--answer-buffer-per-process", "512M",
        ])
        let limits = options.serverLimits(defaultTimeout: .seconds(10))
        #expect(limits.defaultUnaryTimeout == .milliseconds(1500))
        #expect(limits.answerBuffer.perConnection == 1 << 20)
        #expect(limits.answerBuffer.perProcess == 512 << 20)
    }

    @Test("apply(to:program:defaultPort:) carries every common flag into a service's configuration")
    func applyCarriesEveryField() throws {
        let options = try ServiceOptions.parse([
            "--host", "10.1.2.3", "--port", "9123", "--grace-seconds", "3", "--default-timeout-ms", "1500",
            "--answer-buffer-per-connection", "1M", "--answer-buffer-per-process", "512M",
        ])
        var configuration = UnsetConfiguration()
        options.apply(to: &configuration, program: "auth-svc", defaultPort: 7001)
        #expect(configuration.host == "10.1.2.3")
        #expect(configuration.port == 9123)
        #expect(configuration.gracePeriod == .seconds(3))
        #expect(configuration.serverLimits.defaultUnaryTimeout == .milliseconds(1500))
        #expect(configuration.serverLimits.answerBuffer.perConnection == 1 << 20)
        #expect(configuration.serverLimits.answerBuffer.perProcess == 512 << 20)
        #expect(configuration.metrics != nil)
    }

    @Test("--no-metrics leaves the configuration without a registry: nothing counted, no /metrics")
    func noMetrics() throws {
        var configuration = UnsetConfiguration()
        try ServiceOptions.parse(["--no-metrics"]).apply(to: &configuration, program: "auth-svc", defaultPort: 7001)
        #expect(configuration.metrics == nil)
    }

    @Test("apply(to:program:defaultPort:) without the flags: the service's port and the given deadline")
    func applyDefaults() throws {
        let environment = ProcessInfo.processInfo.environment
        let options = try ServiceOptions.parse([])
        var configuration = UnsetConfiguration()
        options.apply(to: &configuration, program: "auth-svc", defaultPort: 7001, defaultTimeout: .seconds(10))
        if environment["SHOP_PORT"] == nil { #expect(configuration.port == 7001) }
        if environment["SHOP_DEFAULT_TIMEOUT_MS"] == nil {
            #expect(configuration.serverLimits.defaultUnaryTimeout == .seconds(10))
            #expect(options.defaultTimeout(or: .seconds(10)) == .seconds(10))
        }
    }

    @Test("--otlp-endpoint gives the configuration an exporter named after the program, counting into its metrics")
    func otlpEndpoint() async throws {
        var configuration = UnsetConfiguration()
        try ServiceOptions.parse(["--otlp-endpoint", "http://127.0.0.1:4318"]).apply(to: &configuration, program: "order-svc", defaultPort: 7004)
        let exporter = try #require(configuration.spans as? OTLPSpanExporter)
        #expect(exporter.serviceName == "order-svc")
        #expect(exporter.tracesURL == "http://127.0.0.1:4318/v1/traces")
        let page = try #require(configuration.metrics).exposition()
        for name in ["otlp_spans_exported_total", "otlp_spans_dropped_total", "otlp_export_failures_total"] {
            #expect(page.contains("\n\(name) 0\n"), "\(name) is not served")
        }
        await exporter.shutdown(within: .seconds(5))
    }

    @Test("without --otlp-endpoint (nor SHOP_OTLP_ENDPOINT) no span is recorded")
    func noOTLPEndpoint() throws {
        var configuration = UnsetConfiguration()
        try ServiceOptions.parse([]).apply(to: &configuration, program: "order-svc", defaultPort: 7004)
        if ProcessInfo.processInfo.environment["SHOP_OTLP_ENDPOINT"] == nil { #expect(configuration.spans == nil) }
    }

    @Test("bad values are refused with the flag named", arguments: [
        ["--default-timeout-ms", "0"], ["--answer-buffer-per-connection", "12"], ["--answer-buffer-per-process", "lots"],
        ["--otlp-endpoint", "https://collector:4318"], ["--otlp-endpoint", "collector:4318"], ["--otlp-endpoint", "http://"],
    ])
    func badValues(arguments: [String]) {
        #expect(throws: (any Error).self) { try ServiceOptions.parse(arguments) }
    }
}

/// A configuration whose every field differs from what ``ServiceOptionsTests`` sets: a field
/// that ``ServiceOptions/apply(to:program:defaultPort:defaultTimeout:)`` does not carry keeps its value here.
private struct UnsetConfiguration: ServiceConfiguration {
    /// Not an address.
    var host = "unset"
    /// Not a port.
    var port = -1
    /// No grace.
    var gracePeriod: Duration = .zero
    /// Limits no flag above asks for.
    var serverLimits: ServerLimits = {
        var limits = ServerLimits()
        limits.defaultUnaryTimeout = nil
        limits.answerBuffer.perConnection = 1
        limits.answerBuffer.perProcess = 1
        return limits
    }()
    /// A registry, which `--no-metrics` takes away.
    var metrics: MetricsRegistry? = MetricsRegistry()
    /// No spans.
    var spans: (any SpanRecorder)?
}
