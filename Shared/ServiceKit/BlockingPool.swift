internal import Dispatch
internal import Foundation
internal import RPC
internal import Synchronization
#if canImport(Glibc)
internal import Glibc
#endif

/// A fixed set of threads for blocking work — password hashing, file I/O, anything that must
/// not run on an event loop or hold a thread of Swift's cooperative pool. At most `threads`
/// jobs run at once and at most `queueLimit` wait; beyond that, callers get
/// `RESOURCE_EXHAUSTED`/`OVERLOADED` at once instead of an ever-growing queue.
///
/// Thread-safe. A job whose calling task is cancelled before the job starts is skipped.
public final class BlockingPool: Sendable {
    private struct Job {
        let run: @Sendable () -> Void
        let skip: @Sendable () -> Void
        let isCancelled: @Sendable () -> Bool
    }

    private struct State {
        var jobs: [Job] = []
        var head = 0
        var stopped = false
        var waiting: Int { jobs.count - head }
    }

    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)
    /// Jobs that may wait for a thread before new ones are refused.
    public let queueLimit: Int
    /// The number of threads.
    public let threadCount: Int

    /// Starts `threads` threads named `name-N`. A positive `niceness` lowers their scheduling
    /// priority (Linux per-thread nice): CPU-bound work such as password hashing then yields
    /// the cores to the event loops, so a flood of it slows itself rather than every call.
    public init(threads: Int, name: String, queueLimit: Int = 1024, niceness: Int32 = 0) {
        self.threadCount = max(1, threads)
        self.queueLimit = queueLimit
        for index in 0..<threadCount {
            let thread = Thread { [self] in
                #if os(Linux)
                // On Linux the nice value is per thread, and `who` 0 names the calling thread (setpriority(2), NOTES).
                if niceness > 0 { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness) }
                #endif
                self.work()
            }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    /// Runs `body` on one of the pool's threads and returns its result.
    /// - Throws: `RESOURCE_EXHAUSTED`/`OVERLOADED` when the queue is full, `CancellationError`
    ///   when the task was cancelled before the job started, or what `body` throws.
    public func run<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
        let cancelled = Atomic<Bool>(false)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Result, any Error>) in
                let job = Job(
                    run: { continuation.resume(with: Swift.Result { try body() }) },
                    skip: { continuation.resume(throwing: CancellationError()) },
                    isCancelled: { cancelled.load(ordering: .relaxed) })
                let accepted = state.withLock { state -> Bool in
                    guard !state.stopped, state.waiting < queueLimit else { return false }
                    state.jobs.append(job)
                    return true
                }
                guard accepted else {
                    continuation.resume(throwing: RPCError(
                        code: .resourceExhausted, reason: "OVERLOADED", message: "The server is busy; retry shortly."))
                    return
                }
                available.signal()
            }
        } onCancel: {
            cancelled.store(true, ordering: .relaxed)
        }
    }

    /// Stops the threads once the queued jobs are done; later `run` calls are refused.
    public func shutdown() {
        state.withLock { $0.stopped = true }
        for _ in 0..<threadCount { available.signal() }
    }

    /// The number of jobs waiting for a thread.
    public var queued: Int { state.withLock { $0.waiting } }

    private func work() {
        while true {
            available.wait()
            let job = state.withLock { state -> Job? in
                guard state.head < state.jobs.count else { return nil }
                let job = state.jobs[state.head]
                state.head += 1
                if state.head > 64 && state.head * 2 > state.jobs.count {
                    state.jobs.removeFirst(state.head)
                    state.head = 0
                }
                return job
            }
            guard let job else {
                if state.withLock({ $0.stopped }) { return }
                continue
            }
            if job.isCancelled() { job.skip() } else { job.run() }
        }
    }
}
