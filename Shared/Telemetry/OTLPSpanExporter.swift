internal import Dispatch
internal import Foundation
package import RPC
internal import Synchronization
internal import SystemCalls

/// A ``SpanRecorder`` that sends the process's spans to an OpenTelemetry collector as
/// OTLP/HTTP JSON (`--otlp-endpoint`; the body is an ``OTLPTraceRequest``).
///
/// ``record(_:)`` runs on the transports' threads as each call ends, so it never blocks: it
/// appends to a bounded queue under a short lock, or — the queue full — drops the span and
/// counts it (`otlp_spans_dropped_total`). A thread of its own takes batches of up to
/// ``Limits/batchSize`` spans (a full batch at once, else what has gathered each
/// ``Limits/interval``) and POSTs each with a timeout; a batch that fails is dropped and
/// counted (`otlp_export_failures_total`, its spans as dropped), never retried, so a collector
/// that is down costs the process one bounded request per batch and no memory. Spans whose
/// trace the caller did not sample (trace flags without bit 0) are not exported: the caller
/// records none of that trace either.
///
/// Thread-safe. The thread runs until ``shutdown(within:)``, which sends what is still queued.
package final class OTLPSpanExporter: SpanRecorder {
    /// The bounds of the queue, the batches and the requests.
    package struct Limits: Sendable {
        /// The most spans waiting to be sent; more are dropped.
        package var queueCapacity = 4096
        /// The most spans in one request.
        package var batchSize = 512
        /// How long spans short of a batch wait before they are sent anyway.
        package var interval: Duration = .seconds(1)
        /// How long one request may take, from connecting to the answer's end.
        package var timeout: Duration = .seconds(5)

        /// The defaults.
        package init() {}
    }

    /// Where the spans are POSTed: the collector's `/v1/traces`.
    package let tracesURL: String
    /// `service.name` of every span: the program.
    package let serviceName: String
    /// The bounds it keeps.
    package let limits: Limits

    /// Spans sent and accepted.
    private let exported: Counter
    /// Spans lost: the queue was full, their request failed, or they came after shutdown.
    private let dropped: Counter
    /// Requests that failed.
    private let failures: Counter

    /// What the recording threads and the exporting thread share.
    private struct State {
        /// Spans waiting to be sent, oldest first.
        var queue: [SpanRecord] = []
        /// Whether the exporting thread sleeps until woken (or its interval ends).
        var waiting = false
        /// Whether shutdown has begun: nothing more is queued, the rest is sent.
        var stopping = false
        /// Whether the exporting thread has sent the last batch and ended.
        var finished = false
    }

    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)

    /// An exporter to the collector at `endpoint`, counting into `metrics` (a registry of its
    /// own, unserved, when nil), with its thread started; nil when `endpoint` is not an
    /// `http://` URL with a host (``tracesURL(endpoint:)``).
    package init?(endpoint: String, serviceName: String, metrics: MetricsRegistry?, limits: Limits = Limits()) {
        guard let tracesURL = Self.tracesURL(endpoint: endpoint) else { return nil }
        self.tracesURL = tracesURL
        self.serviceName = serviceName
        self.limits = limits
        let registry = metrics ?? MetricsRegistry()
        exported = registry.counter("otlp_spans_exported_total", help: "Spans sent to the OTLP endpoint and accepted.")
        dropped = registry.counter(
            "otlp_spans_dropped_total", help: "Spans not exported: the queue was full, their export failed, or the process was stopping.")
        failures = registry.counter("otlp_export_failures_total", help: "OTLP export requests that failed (their spans are dropped).")
        let thread = Thread { [self] in exportUntilStopped() }
        thread.name = "otlp-exporter"
        thread.start()
    }

    /// The URL spans are POSTed to for `endpoint`: `<endpoint>/v1/traces` when it has no path
    /// (as OTLP's base endpoint), else `endpoint` as given; nil when it is not an `http://`
    /// URL with a host.
    package static func tracesURL(endpoint: String) -> String? {
        guard let target = try? HTTPTarget(url: endpoint) else { return nil }
        guard target.path == "/" else { return endpoint }
        return (endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint) + "/v1/traces"
    }

    // MARK: Recording

    /// Queues `span` for export, or drops and counts it when the queue is full or shutdown has
    /// begun; wakes the exporting thread once a batch is ready. Takes one short lock, no I/O.
    package func record(_ span: SpanRecord) {
        guard span.trace.flags & 1 == 1 else { return }
        let (queued, wakeExporter) = state.withLock { state -> (Bool, Bool) in
            guard !state.stopping, state.queue.count < limits.queueCapacity else { return (false, false) }
            state.queue.append(span)
            guard state.waiting, state.queue.count >= limits.batchSize else { return (true, false) }
            state.waiting = false
            return (true, true)
        }
        if !queued { dropped.increment() }
        if wakeExporter { wake.signal() }
    }

    /// Stops taking spans and sends what is queued, waiting at most `limit` for the last
    /// request to end (a collector that hangs must not hold the process's exit); spans
    /// recorded from now on are dropped. Called once, as the process stops.
    package func shutdown(within limit: Duration) async {
        state.withLock { $0.stopping = true }
        wake.signal()
        let deadline = ContinuousClock.now + limit
        while !state.withLock({ $0.finished }), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// ``shutdown(within:)`` with the time one request may take and a little more.
    package func shutdown() async {
        await shutdown(within: limits.timeout + .seconds(1))
    }

    // MARK: Exporting

    /// The exporting thread: sends a batch whenever one is full or the interval has passed
    /// with spans waiting, and sleeps otherwise; once stopping, sends the rest and ends.
    private func exportUntilStopped() {
        var due = ContinuousClock.now + limits.interval
        while true {
            let now = ContinuousClock.now
            let taken = state.withLock { state -> (batch: [SpanRecord], stopping: Bool)? in
                guard state.queue.count >= limits.batchSize || state.stopping || now >= due else {
                    state.waiting = true
                    return nil
                }
                let batch = Array(state.queue.prefix(limits.batchSize))
                state.queue.removeFirst(batch.count)
                return (batch, state.stopping)
            }
            guard let taken else {
                _ = wake.wait(timeout: .now() + .nanoseconds(Int((due - now) / .nanoseconds(1))))
                continue
            }
            if taken.batch.isEmpty && taken.stopping { break }
            if !taken.batch.isEmpty { export(taken.batch) }
            due = ContinuousClock.now + limits.interval
        }
        state.withLock { $0.finished = true }
    }

    /// POSTs `batch`, counting it exported when the collector accepts it (a 2xx answer), else
    /// counting the failure and the batch's spans as dropped.
    private func export(_ batch: [SpanRecord]) {
        do {
            let body = try OTLPTraceRequest(spans: batch, serviceName: serviceName).encoded()
            let response = try BlockingHTTPClient.request(
                method: "POST", url: tracesURL, headers: [("content-type", "application/json")], body: body,
                timeout: limits.timeout, responseLimit: 64 << 10)
            guard (200..<300).contains(response.status) else {
                countFailure(of: batch)
                return
            }
            exported.increment(by: UInt64(batch.count))
        } catch {
            countFailure(of: batch)
        }
    }

    /// Counts a failed request and its spans as dropped.
    private func countFailure(of batch: [SpanRecord]) {
        failures.increment()
        dropped.increment(by: UInt64(batch.count))
    }
}
