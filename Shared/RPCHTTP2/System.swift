#if canImport(Glibc)
internal import Glibc
#endif
private import CLinux
internal import SystemCalls

/// What the event loops add to the system-call layer (``System`` in SystemCalls): malloc
/// tuning, pinning a loop's thread and the loops' clock.
extension System {
    /// Tunes glibc's malloc for a long-running server, once per process (see
    /// `storefront_tune_malloc` in CLinux): evaluated by the first event loop group.
    static let mallocTuned: Void = storefront_tune_malloc()

    /// Lets the calling thread run on `cpus` only; false when the kernel refuses (a CPU outside
    /// the process's cpuset, or gone offline).
    @discardableResult
    static func runCurrentThread(on cpus: [Int]) -> Bool {
        let list = cpus.map(Int32.init)
        return storefront_set_current_thread_cpus(list, Int32(list.count)) == 0
    }

    /// Monotonic time in nanoseconds, for timers.
    static func monotonicNanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}

extension Duration {
    /// The duration in whole nanoseconds, 0 for a negative one: the unit of the loops' clock
    /// (``System/monotonicNanoseconds()``).
    /// Saturates at `UInt64.max` (584 years) rather than trapping.
    var clockNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = UInt64(max(0, seconds)).multipliedReportingOverflow(by: 1_000_000_000)
        let (sum, sumOverflow) = whole.addingReportingOverflow(UInt64(max(0, attoseconds / 1_000_000_000)))
        return overflow || sumOverflow ? .max : sum
    }
}
