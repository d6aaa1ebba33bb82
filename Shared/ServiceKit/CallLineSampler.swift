internal import Foundation
internal import Logging
internal import Synchronization

/// Bounds the call lines of refused calls (``CallLogLine/refusal``: rate-limited, over a
/// limit, refused at the HTTP level) a process writes: the first ``perSecond`` of each second
/// are written, the rest only counted, and one summary line a second says how many were
/// left out and why (`call lines suppressed count=39000 reasons=HTTP-405:38900,RATE_LIMITED:100`).
///
/// A client refused tens of thousands of times a second would otherwise write a line for
/// each — megabytes a second into a log that must keep its history. Lines of calls the
/// application answered, successes and failures alike, are never sampled.
///
/// Seconds are counted on the monotonic clock from the sampler's start. Thread-safe: the
/// state is behind a mutex, taken once per refused call (never for other calls).
package final class CallLineSampler: Sendable {
    /// The process's sampler, used by every ``LogLineHandler`` and the log sink's writer;
    /// ``perSecond`` from `SHOP_LOG_REFUSED_PER_SECOND`, else ``defaultPerSecond``, until
    /// `--log-refused-per-second` sets it (``ServiceMain/bootstrapLogging(_:)``).
    package static let process = CallLineSampler(
        perSecond: ProcessInfo.processInfo.environment["SHOP_LOG_REFUSED_PER_SECOND"].flatMap { Int($0) } ?? defaultPerSecond)

    /// Refused-call lines written each second before the rest are only counted: at ~300 bytes
    /// a line, 100 a second is 30 KB a second at most, however hard a client is refused.
    package static let defaultPerSecond = 100

    /// At most this many distinct refusals are named in a summary; the others add up under
    /// `OTHER` (refusals are a fixed set of reasons and HTTP statuses, so this is a backstop
    /// that keeps the summary's `reasons` within a field's bound).
    static let maxKinds = 8

    private struct State {
        /// The second the counts are for.
        var second: Int64 = 0
        /// Refused-call lines written in `second`.
        var written = 0
        /// Lines left out in `second`, by refusal, and in all.
        var suppressed: [String: Int] = [:]
        var suppressedTotal = 0
        /// The label of the last line left out, for the summary.
        var label = "log"
    }

    /// Refused-call lines written per second before the rest are counted (0: none, only the
    /// summaries).
    package var perSecond: Int {
        get { limit.load(ordering: .relaxed) }
        set { limit.store(max(0, newValue), ordering: .relaxed) }
    }
    private let limit: Atomic<Int>
    private let state = Mutex(State())
    private let start = ContinuousClock.now

    /// A sampler that writes `perSecond` refused-call lines a second (at least 0).
    package init(perSecond: Int) {
        limit = Atomic(max(0, perSecond))
    }

    /// The current second on the sampler's clock.
    package var currentSecond: Int64 {
        let elapsed = ContinuousClock.now - start
        return elapsed.components.seconds
    }

    /// Whether the line of a call refused for `refusal` (logged by `label`) is written in
    /// `second`, and the summary of an earlier second that is due now, to be written first.
    package func admit(_ refusal: String, label: String, second: Int64) -> (write: Bool, summary: [UInt8]?) {
        state.withLock { state in
            let summary = second > state.second ? Self.roll(&state, to: second) : nil
            if state.written < limit.load(ordering: .relaxed) {
                state.written += 1
                return (true, summary)
            }
            let kind = state.suppressed[refusal] != nil || state.suppressed.count < Self.maxKinds ? refusal : "OTHER"
            state.suppressed[kind, default: 0] += 1
            state.suppressedTotal += 1
            state.label = label
            return (false, summary)
        }
    }

    /// The summary of a second before `second` that left lines out and has not been written
    /// yet, if any (the log sink's writer asks each time it wakes, at least once a second).
    package func summary(before second: Int64) -> [UInt8]? {
        state.withLock { state in second > state.second ? Self.roll(&state, to: second) : nil }
    }

    /// Starts counting `second`; returns the summary of the second before, if it left lines out.
    private static func roll(_ state: inout State, to second: Int64) -> [UInt8]? {
        defer {
            state.second = second
            state.written = 0
            state.suppressed.removeAll(keepingCapacity: true)
            state.suppressedTotal = 0
        }
        guard state.suppressedTotal > 0 else { return nil }
        let reasons = state.suppressed.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")
        return LogLineHandler.line(
            level: .warning, label: state.label, message: "call lines suppressed",
            metadata: ["count": "\(state.suppressedTotal)", "reasons": "\(reasons)", "second": "\(state.second)"])
    }
}
