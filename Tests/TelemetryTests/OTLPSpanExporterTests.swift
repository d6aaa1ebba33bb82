import Foundation
import RPC
import ServiceTestSupport
import Telemetry
import Testing

/// The span exporter against a collector in the test (``OTLPReceiver``): batches, the interval,
/// the bounded queue that never makes a call wait, failures counted and never retried.
@Suite("OTLP span exporter")
struct OTLPSpanExporterTests {
    /// Sampled span number `index` of one trace (its span id `index`).
    static func span(_ index: Int, flags: UInt8 = 1) -> SpanRecord {
        let trace = TraceContext(traceID: (0xAB, 0xCD), spanID: UInt64(index), parentSpanID: nil, flags: flags)
        return SpanRecord(
            path: "/shop.catalog.v1.CatalogService/GetProduct", kind: .server, trace: trace, startNanoseconds: 1_000,
            endNanoseconds: 2_000, code: nil, peer: "127.0.0.1:1")
    }

    /// Limits with these bounds; requests time out after 30 s, which no test here reaches.
    static func limits(capacity: Int = 4096, batch: Int, interval: Duration) -> OTLPSpanExporter.Limits {
        var limits = OTLPSpanExporter.Limits()
        limits.queueCapacity = capacity
        limits.batchSize = batch
        limits.interval = interval
        limits.timeout = .seconds(30)
        return limits
    }

    /// The exporter's counters in `registry`: exported, dropped, failed requests.
    static func counts(_ registry: MetricsRegistry) -> (exported: UInt64, dropped: UInt64, failures: UInt64) {
        (
            registry.counter("otlp_spans_exported_total", help: "").count, registry.counter("otlp_spans_dropped_total", help: "").count,
            registry.counter("otlp_export_failures_total", help: "").count
        )
    }

    @Test("the URL: /v1/traces under a base endpoint, a URL with a path as given; anything but http:// with a host refused",
          arguments: [
            ("http://127.0.0.1:4318", "http://127.0.0.1:4318/v1/traces"), ("http://collector:4318/", "http://collector:4318/v1/traces"),
            ("http://[::1]:4318", "http://[::1]:4318/v1/traces"), ("http://collector/custom/traces", "http://collector/custom/traces"),
            ("https://collector:4318", nil), ("http://", nil), ("http://:4318", nil), ("collector:4318", nil), ("", nil),
          ] as [(String, String?)])
    func tracesURL(endpoint: String, url: String?) {
        #expect(OTLPSpanExporter.tracesURL(endpoint: endpoint) == url)
        #expect((OTLPSpanExporter(endpoint: endpoint, serviceName: "x", metrics: nil) == nil) == (url == nil))
    }

    @Test("full batches go at once, POSTed as JSON to /v1/traces under the program's name; the rest on shutdown")
    func batches() async throws {
        let receiver = try OTLPReceiver()
        let registry = MetricsRegistry()
        let exporter = try #require(OTLPSpanExporter(
            endpoint: receiver.endpoint, serviceName: "catalog-svc", metrics: registry, limits: Self.limits(batch: 2, interval: .seconds(3600))))
        for index in 1...5 { exporter.record(Self.span(index)) }
        #expect(await eventually(within: .seconds(30)) { receiver.requests.count == 2 }, "two full batches, without waiting for the interval")
        await exporter.shutdown()

        let requests = receiver.requests
        #expect(try requests.map { try OTLPReceiver.spans(in: $0.body).count } == [2, 2, 1])
        #expect(requests.allSatisfy { $0.path == "/v1/traces" && $0.contentType == "application/json" })
        let spans = try receiver.spans()
        #expect(spans.map(\.spanID) == (1...5).map { String(repeating: "0", count: 15) + "\($0)" })
        #expect(spans.allSatisfy { $0.service == "catalog-svc" && $0.traceID == "00000000000000ab00000000000000cd" })
        #expect(Self.counts(registry) == (5, 0, 0))
    }

    @Test("spans short of a batch go once the interval has passed, without a shutdown")
    func interval() async throws {
        let receiver = try OTLPReceiver()
        let exporter = try #require(OTLPSpanExporter(
            endpoint: receiver.endpoint, serviceName: "order-svc", metrics: nil, limits: Self.limits(batch: 512, interval: .milliseconds(100))))
        exporter.record(Self.span(1))
        #expect(try await eventually(within: .seconds(30)) { try receiver.spans().count == 1 })
        await exporter.shutdown()
    }

    @Test("while the collector holds a request unanswered, record still returns at once: the queue fills to its bound and the rest are dropped and counted")
    func stalledCollector() async throws {
        let receiver = try OTLPReceiver()
        receiver.hold()
        let registry = MetricsRegistry()
        let exporter = try #require(OTLPSpanExporter(
            endpoint: receiver.endpoint, serviceName: "gateway", metrics: registry,
            limits: Self.limits(capacity: 8, batch: 4, interval: .seconds(3600))))
        for index in 1...4 { exporter.record(Self.span(index)) }
        #expect(await eventually(within: .seconds(30)) { receiver.heldCount == 1 }, "the first batch reached the collector, which holds it")

        // The exporter's one thread waits on the collector: every span from here stays queued
        // or is dropped, and each record returns while the request is still held.
        for index in 5...104 { exporter.record(Self.span(index)) }
        #expect(receiver.heldCount == 1, "the collector still held the request while every record returned")
        #expect(Self.counts(registry) == (0, 92, 0))

        receiver.release()
        await exporter.shutdown()
        #expect(Self.counts(registry) == (12, 92, 0))
        #expect(try receiver.spans().map(\.spanID).count == 12)
    }

    @Test("a request the collector refuses is counted as a failure and its spans as dropped, and is not sent again")
    func refusedRequest() async throws {
        let receiver = try OTLPReceiver()
        receiver.answer(status: 500)
        let registry = MetricsRegistry()
        let exporter = try #require(OTLPSpanExporter(
            endpoint: receiver.endpoint, serviceName: "basket-svc", metrics: registry, limits: Self.limits(batch: 3, interval: .seconds(3600))))
        for index in 1...3 { exporter.record(Self.span(index)) }
        #expect(await eventually(within: .seconds(30)) { Self.counts(registry).failures == 1 })
        await exporter.shutdown()
        #expect(Self.counts(registry) == (0, 3, 1))
        #expect(receiver.requests.count == 1)
    }

    @Test("a collector that is not there: the request fails, counted, spans dropped")
    func unreachableCollector() async throws {
        let receiver = try OTLPReceiver()
        let endpoint = receiver.endpoint
        receiver.stop()  // nothing listens on its port any more
        let registry = MetricsRegistry()
        let exporter = try #require(OTLPSpanExporter(
            endpoint: endpoint, serviceName: "auth-svc", metrics: registry, limits: Self.limits(batch: 2, interval: .seconds(3600))))
        exporter.record(Self.span(1))
        exporter.record(Self.span(2))
        #expect(await eventually(within: .seconds(30)) { Self.counts(registry).failures == 1 })
        await exporter.shutdown()
        #expect(Self.counts(registry) == (0, 2, 1))
    }

    @Test("spans of a trace the caller did not sample are not exported, nor counted as dropped")
    func unsampled() async throws {
        let receiver = try OTLPReceiver()
        let registry = MetricsRegistry()
        let exporter = try #require(OTLPSpanExporter(
            endpoint: receiver.endpoint, serviceName: "gateway", metrics: registry, limits: Self.limits(batch: 512, interval: .seconds(3600))))
        exporter.record(Self.span(1, flags: 0))
        exporter.record(Self.span(2, flags: 1))
        await exporter.shutdown()
        #expect(try receiver.spans().map(\.spanID) == ["0000000000000002"])
        #expect(Self.counts(registry) == (1, 0, 0))
    }

    @Test("spans recorded after shutdown are dropped and counted")
    func afterShutdown() async throws {
        let receiver = try OTLPReceiver()
        let registry = MetricsRegistry()
        let exporter = try #require(OTLPSpanExporter(
            endpoint: receiver.endpoint, serviceName: "gateway", metrics: registry, limits: Self.limits(batch: 512, interval: .seconds(3600))))
        await exporter.shutdown()
        exporter.record(Self.span(1))
        #expect(Self.counts(registry) == (0, 1, 0))
        #expect(receiver.requests.isEmpty)
    }
}
