import Foundation
import RPC
import Synchronization
import SystemCalls
import Telemetry

/// One reading of a process's `/metrics`: what it served and when, or why it could not be read.
enum ProcessScrape: Sendable {
    /// The page, parsed, and when it arrived.
    case up(ParsedMetrics, at: ContinuousClock.Instant)
    /// The process did not answer with a page: refused, timed out, not HTTP 200, not the format.
    case down(reason: String)
}

/// Reads `/metrics` of processes over HTTP/1.1, each on a thread of its own (the client
/// blocks), all at once. Stateless.
enum MetricsScraper {
    /// A scrape of each of `targets`, in their order, each bounded by `timeout`.
    static func scrape(_ targets: [TopTarget], timeout: Duration) async throws -> [ProcessScrape] {
        try await withThrowingTaskGroup(of: (Int, ProcessScrape).self) { group in
            for (index, target) in targets.enumerated() {
                group.addTask { (index, try await onThread { scrape(target, timeout: timeout) }) }
            }
            var scrapes = [ProcessScrape](repeating: .down(reason: "not scraped"), count: targets.count)
            for try await (index, scrape) in group { scrapes[index] = scrape }
            return scrapes
        }
    }

    /// A blocking scrape of `target`.
    static func scrape(_ target: TopTarget, timeout: Duration) -> ProcessScrape {
        let response: BlockingHTTPResponse
        do throws(BlockingHTTPError) {
            response = try BlockingHTTPClient.request(
                host: target.address.host, port: target.address.port, path: "/metrics",
                headers: [("accept", "text/plain;version=0.0.4")], timeout: timeout)
        } catch {
            return .down(reason: "\(error)")
        }
        let arrived = ContinuousClock.now
        guard response.status == 200 else { return .down(reason: "/metrics answered HTTP \(response.status)") }
        do throws(MetricsParseError) {
            return .up(try MetricsParser.parse(response.text), at: arrived)
        } catch {
            return .down(reason: "/metrics is not Prometheus text: \(error)")
        }
    }

    /// Runs blocking `work` on a new thread; the caller's task is cancellable while it runs
    /// (it then throws `CancellationError`, and the thread finishes on its own, its result
    /// dropped), so Ctrl-C is not held up by a scrape waiting out its timeout.
    static func onThread<Value: Sendable>(_ work: @escaping @Sendable () -> Value) async throws -> Value {
        let waiter = Mutex<CheckedContinuation<Value, any Error>?>(nil)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                waiter.withLock { $0 = continuation }
                if Task.isCancelled {  // cancelled before the handler's continuation was there to resume
                    waiter.withLock { $0.take() }?.resume(throwing: CancellationError())
                    return
                }
                Thread {
                    let value = work()
                    waiter.withLock { $0.take() }?.resume(returning: value)
                }.start()
            }
        } onCancel: {
            waiter.withLock { $0.take() }?.resume(throwing: CancellationError())
        }
    }
}
