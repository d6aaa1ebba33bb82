#if canImport(Glibc)
internal import Glibc
#endif
private import CLinux

/// The one wrapper every syscall goes through (like swift-nio's `NIOPosix/System.swift`):
/// retries `EINTR`, turns other failures into ``SystemError``, and treats `EBADF`/`EFAULT` as
/// programmer errors — a precondition failure, since they mean a descriptor used after its
/// close (a double close above all) or a bad buffer, which no caller can handle.
///
/// Stateless and thread-safe; `errno` is per thread.
package enum System {
    /// What a call's failure with some `errno` means (``failure(of:errno:)``).
    package enum Failure: Equatable {
        /// Interrupted by a signal before it did anything: the call is made again.
        case interrupted
        /// A bug in the caller (`EBADF`, `EFAULT`): the process stops.
        case programmerError
        /// Any other failure, thrown to the caller.
        case error(SystemError)
    }

    /// The meaning of `function` failing with `errno`: the mapping ``call(_:_:)`` applies.
    @inlinable
    package static func failure(of function: String, errno: Int32) -> Failure {
        switch errno {
        case EINTR: .interrupted
        case EBADF, EFAULT: .programmerError
        default: .error(SystemError(function: function, errno: errno))
        }
    }

    /// Runs `body` until it does not fail with `EINTR`; `-1` becomes a thrown error.
    @inlinable @inline(__always)
    package static func call<Result: FixedWidthInteger>(_ function: String, _ body: () -> Result) throws(SystemError) -> Result {
        while true {
            let result = body()
            if result != -1 { return result }
            switch failure(of: function, errno: Glibc.errno) {
            case .interrupted: continue
            case .programmerError: preconditionFailure("\(function) on a bad descriptor or buffer (errno \(Glibc.errno))")
            case .error(let error): throw error
            }
        }
    }

    /// Like ``call(_:_:)`` for non-blocking I/O: `nil` when the call would block.
    @inlinable @inline(__always)
    package static func nonBlocking<Result: FixedWidthInteger>(_ function: String, _ body: () -> Result) throws(SystemError) -> Result? {
        do {
            return try call(function, body)
        } catch where error.errno == EAGAIN || error.errno == EWOULDBLOCK {
            return nil
        }
    }

    /// Closes a descriptor. `EBADF` is a precondition failure (a double close); other errors,
    /// `EINTR` included, are ignored, as Linux frees the descriptor either way (close(2)) and
    /// calling again could close one another thread has opened since.
    package static func close(_ fd: Int32) {
        guard Glibc.close(fd) == -1 else { return }
        precondition(failure(of: "close", errno: Glibc.errno) != .programmerError, "close(\(fd)): a descriptor closed twice")
    }

    /// Writes all of `bytes` to the blocking descriptor `fd`, however many calls it takes (a
    /// pipe, a socket or a full disk may take part of a write).
    package static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemError) {
        var offset = 0
        while offset < bytes.count {
            offset += try call("write") { Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset) }
        }
    }

    /// Bytes glibc's malloc holds free in its arenas: freed by the process, not yet given back.
    package static var mallocFreeBytes: Int { Int(storefront_malloc_free_bytes()) }

    /// Gives the free pages of malloc's arenas back to the kernel (`malloc_trim(0)`): free()
    /// returns only a heap's top, so memory freed below live blocks — after a burst of large
    /// answers, say — otherwise stays with the process for good. Returns whether any was.
    @discardableResult
    package static func trimMalloc() -> Bool { storefront_malloc_trim() != 0 }

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

    /// Tunes glibc's malloc for a long-running server, once per process (see
    /// `storefront_tune_malloc` in CLinux): evaluated by the first event loop group.
    package static let mallocTuned: Void = storefront_tune_malloc()

    /// Lets the calling thread run on `cpus` only (pins an event loop's thread); false when the
    /// kernel refuses (a CPU outside the process's cpuset, or gone offline).
    @discardableResult
    package static func runCurrentThread(on cpus: [Int]) -> Bool {
        let list = cpus.map(Int32.init)
        return storefront_set_current_thread_cpus(list, Int32(list.count)) == 0
    }

    /// Monotonic time in nanoseconds: the event loops' clock, for timers and deadlines.
    package static func monotonicNanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// The CPUs the calling thread may run on now; empty when the kernel does not say.
    package static func cpusOfCurrentThread() -> [Int] {
        let cpus = [Int32](unsafeUninitializedCapacity: Int(STOREFRONT_MAX_CPUS)) { buffer, count in
            count = max(0, Int(storefront_allowed_cpus(buffer.baseAddress, Int32(buffer.count))))
        }
        return cpus.map(Int.init)
    }
}
