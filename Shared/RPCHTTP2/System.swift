#if canImport(Glibc)
internal import Glibc
#endif
private import CLinux

/// A failed system call: the call's name and `errno`.
package struct SystemError: Error, CustomStringConvertible {
    /// The function that failed, e.g. `connect`.
    package let function: String
    /// The `errno` it set.
    package let errno: Int32

    package var description: String {
        "\(function): \(String(cString: strerror(errno))) (errno \(errno))"
    }
}

/// The one wrapper every syscall of the transport goes through: retries `EINTR`, turns other
/// failures into ``SystemError``, and treats `EBADF`/`EFAULT` as programmer errors.
package enum System {
    /// Runs `body` until it does not fail with `EINTR`; `-1` becomes a thrown error.
    @inline(__always)
    package static func call<Result: FixedWidthInteger>(_ function: String, _ body: () -> Result) throws(SystemError) -> Result {
        while true {
            let result = body()
            if result != -1 { return result }
            let code = Glibc.errno
            if code == EINTR { continue }
            precondition(code != EBADF && code != EFAULT, "\(function) on a bad descriptor or buffer")
            throw SystemError(function: function, errno: code)
        }
    }

    /// Like ``call(_:_:)`` for non-blocking I/O: `nil` when the call would block.
    @inline(__always)
    static func nonBlocking<Result: FixedWidthInteger>(_ function: String, _ body: () -> Result) throws(SystemError) -> Result? {
        do {
            return try call(function, body)
        } catch where error.errno == EAGAIN || error.errno == EWOULDBLOCK {
            return nil
        }
    }

    /// Closes a descriptor; errors other than `EBADF` are ignored, as the fd is gone either way.
    package static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    /// Bytes glibc's malloc holds free in its arenas: freed by the process, not yet given back.
    package static var mallocFreeBytes: Int { Int(storefront_malloc_free_bytes()) }

    /// Gives the free pages of malloc's arenas back to the kernel (`malloc_trim(0)`): free()
    /// returns only a heap's top, so memory freed below live blocks — after a burst of large
    /// answers, say — otherwise stays with the process for good. Returns whether any was.
    @discardableResult
    package static func trimMalloc() -> Bool { storefront_malloc_trim() != 0 }

    /// Tunes glibc's malloc for a long-running server, once per process (see
    /// `storefront_tune_malloc` in CLinux): evaluated by the first event loop group.
    static let mallocTuned: Void = storefront_tune_malloc()

    /// The CPUs this process may use — its affinity mask, which `taskset` and a container's
    /// cpuset narrow — in increasing order, as the thread that first asks sees them (at
    /// start-up, before any loop is pinned: a thread started by a pinned loop inherits the
    /// loop's one CPU); every online CPU when the mask cannot be read.
    package static let allowedCPUs: [Int] = {
        let cpus = cpusOfCurrentThread()
        return cpus.isEmpty ? Array(0..<max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))) : cpus
    }()

    /// The number of cores this process may use (``allowedCPUs``): one event loop each.
    package static var coreCount: Int { allowedCPUs.count }

    /// The CPUs the calling thread may run on now; empty when the kernel does not say.
    package static func cpusOfCurrentThread() -> [Int] {
        let cpus = [Int32](unsafeUninitializedCapacity: Int(STOREFRONT_MAX_CPUS)) { buffer, count in
            count = max(0, Int(storefront_allowed_cpus(buffer.baseAddress, Int32(buffer.count))))
        }
        return cpus.map(Int.init)
    }

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
