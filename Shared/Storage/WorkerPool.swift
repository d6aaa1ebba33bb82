import Dispatch
private import Foundation
import Synchronization
import Telemetry

/// A fixed set of dedicated threads, each owning one `Connection`, that run jobs from one
/// first-in-first-out queue; the bridge between async callers and blocking SQLite calls.
///
/// Blocking work never runs on Swift's cooperative pool: a caller's task suspends on a
/// continuation while a worker thread runs its job. Each connection is opened, used and
/// closed on its own thread only, one job at a time. A pool of one thread serializes its jobs.
///
/// Thread-safe: the queue is guarded by a `Mutex`, and a semaphore counts the jobs in it.
final class WorkerPool: Sendable {
    /// One unit of work for a worker thread.
    private enum Job: Sendable {
        /// Run a closure with the worker's connection.
        case run(@Sendable (Connection) -> Void)
        /// Close the connection, call the closure, and end the thread.
        case stop(@Sendable () -> Void)
    }

    /// The queue and the pool's life-cycle state, guarded by `state`.
    private struct State {
        /// Jobs in arrival order; slots before `head` were taken (and cleared).
        var jobs: [Job?] = []
        /// The index of the next job to take.
        var head = 0
        /// False once shutdown began: new work is refused with `StorageError.closed`.
        var acceptsWork = true
        /// Threads that opened their connection and have not stopped yet.
        var runningWorkers = 0

        mutating func push(_ job: Job) {
            jobs.append(job)
        }

        mutating func pop() -> Job? {
            guard head < jobs.count else { return nil }
            let job = jobs[head]
            jobs[head] = nil
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64 && head * 2 >= jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            return job
        }
    }

    private let state = Mutex(State())
    /// Signalled once per pushed job; a worker waits on it before taking one.
    private let pendingJobs = DispatchSemaphore(value: 0)
    /// Where each job's wait, from `submit` to a worker taking it, is recorded; nil records nothing.
    private let waits: Histogram?

    private init(waits: Histogram?) {
        self.waits = waits
    }

    /// Starts `count` threads named after `name`, each running `open` first to create its
    /// connection, and returns once all of them are ready. A job's wait for a worker is
    /// recorded in `waits`, when given.
    ///
    /// - Throws: The first error of `open`; threads already started are stopped again.
    static func start(
        name: String, count: Int, waits: Histogram? = nil, open: @escaping @Sendable () throws -> Connection
    ) async throws -> WorkerPool {
        let pool = WorkerPool(waits: waits)
        for index in 0..<count {
            do {
                try await withCheckedThrowingContinuation { (started: CheckedContinuation<Void, any Error>) in
                    let thread = Thread { pool.runWorker(open: open, started: started) }
                    thread.name = count == 1 ? name : "\(name)-\(index)"
                    thread.start()
                }
            } catch {
                await pool.shutdown()
                throw error
            }
        }
        return pool
    }

    /// Runs `work` on a worker thread with its connection and returns its result.
    ///
    /// Jobs start in the order they were submitted; once started, a job runs to completion.
    ///
    /// - Throws: What `work` throws, or `StorageError` (`isMisuse`) after shutdown began.
    func submit<T: Sendable>(_ work: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        // Unsafe rather than checked: this runs for every query of every call, and a checked
        // continuation allocates a canary object and is handled through value witnesses (a
        // resilient type); catalog-svc's CPU per GetProduct, which `Benchmarks/gateway-overhead`
        // prints, shows the difference (Benchmarks/HISTORY.md, 2026-11-27, eighth session,
        // 91459b0). It is resumed exactly once: by its job, or here when refused.
        return try await withUnsafeThrowingContinuation { continuation in
            let accepted = execute { connection in
                let result = Result { try work(connection) }
                // Before the caller goes on, so that what it reads next counts the connection idle.
                connection.didRunJob()
                continuation.resume(with: result)
            }
            if !accepted { continuation.resume(throwing: StorageError.closed) }
        }
    }

    /// Queues `work` for a worker thread without waiting for it; returns false, running
    /// nothing, once shutdown began. `work` must call `connection.didRunJob()` when done with
    /// the connection (before it hands results to other threads).
    func execute(_ work: @escaping @Sendable (Connection) -> Void) -> Bool {
        let submitted = waits == nil ? nil : ContinuousClock.now
        let job = Job.run { [waits] connection in
            if let waits, let submitted { waits.observe(since: submitted) }
            connection.willRunJob()
            work(connection)
        }
        let accepted = state.withLock { state in
            guard state.acceptsWork else { return false }
            state.push(job)
            return true
        }
        if accepted { pendingJobs.signal() }
        return accepted
    }

    /// Refuses new work, lets the queued jobs finish, then closes every connection and ends
    /// every thread; returns when all are closed. Later calls return at once.
    func shutdown() async {
        let workers = beginShutdown()
        for _ in 0..<workers {
            await withCheckedContinuation { (stopped: CheckedContinuation<Void, Never>) in
                enqueue(.stop { stopped.resume() })
            }
        }
    }

    /// Like `shutdown()`, without waiting: for a `Database` released without being closed.
    func requestShutdown() {
        for _ in 0..<beginShutdown() {
            enqueue(.stop {})
        }
    }

    /// Stops accepting work and returns how many workers need a stop job (0 if already done).
    private func beginShutdown() -> Int {
        state.withLock { state in
            guard state.acceptsWork else { return 0 }
            state.acceptsWork = false
            return state.runningWorkers
        }
    }

    private func enqueue(_ job: Job) {
        state.withLock { $0.push(job) }
        pendingJobs.signal()
    }

    /// The body of a worker thread: open the connection, then run jobs until told to stop.
    private func runWorker(open: () throws -> Connection, started: CheckedContinuation<Void, any Error>) {
        let connection: Connection
        do {
            connection = try open()
        } catch {
            started.resume(throwing: error)
            return
        }
        state.withLock { $0.runningWorkers += 1 }
        started.resume()
        while true {
            pendingJobs.wait()
            // The semaphore counts queued jobs, so there is one for each wake-up.
            guard let job = state.withLock({ $0.pop() }) else { continue }
            switch job {
            case .run(let work):
                work(connection)
            case .stop(let stopped):
                connection.close()
                state.withLock { $0.runningWorkers -= 1 }
                stopped()
                return
            }
        }
    }
}
