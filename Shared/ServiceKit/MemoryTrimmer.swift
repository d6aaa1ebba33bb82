internal import Foundation
package import Logging
internal import SystemCalls
internal import Telemetry

/// Gives memory the process has freed back to the system after a burst, so a service's size
/// follows its load down as well as up.
///
/// glibc's `free` returns only the top of a heap: after a burst (thousands of large answers
/// buffered for slow clients, a big import) the freed memory below live blocks stays with the
/// process, and a service that once peaked at a gigabyte kept it. Every ``interval`` this reads
/// the resident set; when it has grown by more than ``threshold`` since the last trim (or the
/// start) and malloc holds more than ``threshold`` free, it trims (``System/trimMalloc()``).
///
/// The resident set, not malloc's free count, decides when to look again: a trim hands the
/// pages back but leaves their chunks on malloc's free lists, so the free count stays high and
/// would have every later round trim again — walking every arena under its lock, while the
/// event loops wait on it to allocate. Trims run on a thread of their own, off the cooperative
/// pool.
package struct MemoryTrimmer: Sendable {
    /// How often to look.
    package var interval: Duration = .seconds(30)
    /// The growth of the resident set, and the free bytes, above which a trim runs.
    package var threshold = 64 * 1024 * 1024

    package init() {}

    /// One look: trims when the resident set has grown by more than ``threshold`` over
    /// `baseline` and malloc holds more than ``threshold`` free. Returns the baseline for the
    /// next look (the resident set after this trim, else `baseline`) and, when it trimmed, the
    /// resident set before and after.
    package func look(baseline: Int) -> (baseline: Int, trimmed: (before: Int, after: Int)?) {
        let resident = Self.residentBytes()
        guard resident > baseline + threshold, System.mallocFreeBytes > threshold else {
            return (min(baseline, resident), nil)
        }
        System.trimMalloc()
        let after = Self.residentBytes()
        return (after, (resident, after))
    }

    /// Looks every ``interval`` until cancelled; logs each trim at debug level.
    package func run(logger: Logger) async {
        var baseline = Self.residentBytes()
        while !Task.isCancelled {
            do { try await Task.sleep(for: interval) } catch { return }
            let current = baseline
            let (next, trimmed) = await withCheckedContinuation { continuation in
                Thread { continuation.resume(returning: look(baseline: current)) }.start()
            }
            baseline = next
            if let (before, after) = trimmed {
                logger.debug("returned freed memory to the system: resident \(before >> 20) MiB, now \(after >> 20) MiB")
            }
        }
    }

    /// The process's resident set in bytes (``ProcessMetrics/residentBytes()``); 0 when it
    /// cannot be read.
    package static func residentBytes() -> Int { ProcessMetrics.residentBytes() }
}
