#if canImport(Glibc)
private import Glibc
#endif
import Synchronization
import SystemCalls
import Telemetry

/// The connections a SQLite database keeps for short reads on event loops
/// (`Database.shortRead(_:)`): one per loop thread (by `LoopThread.currentIndex`, modulo
/// `capacity`), each used only under its own lock, so a loop reads on its own connection
/// without handing the call to another thread and back.
///
/// How long a loop can be held, and why it stays short:
/// - only reads a store declares short take this path: a lookup by key, a page of an index;
/// - each runs under a time budget: SQLite checks the thread's deadline every 1,000
///   instructions and stops the statement once it passed (`ReadDeadline`);
/// - a read that took longer than its budget, for any reason — work, or waiting for a page
///   the OS had to read from the disk, which no check can stop — is run again in the reader
///   pool, and every short read goes there for `pause`: a loop loses at most one budget
///   (plus one disk wait) per pause.
///
/// A loop's connection is opened on first use, by a reader thread (its first read runs there),
/// never on the loop. Thread-safe: the slots are locked, the pause is an atomic.
final class ShortReaders: Sendable {
    /// Where a short read ran, or why it did not run here.
    enum Attempt<T: Sendable>: Sendable {
        /// It ran on this thread, with this result.
        case finished(Result<T, any Error>)
        /// Not on a loop, the loop's connection busy or unusable, short reads paused, or the
        /// read overran: run it in the reader pool.
        case elsewhere
        /// The loop's connection is not open yet: open it in the reader pool (`open(_:)`),
        /// then run the read there.
        case opening(Slot)
    }

    /// One loop's connection and where it stands.
    final class Slot: @unchecked Sendable {
        // Invariant for @unchecked Sendable: `state`, and the connection in it, are touched
        // only while `lock` is held.
        fileprivate enum State {
            case unopened
            /// A reader thread is opening it.
            case opening
            case open(Connection)
            /// Opening failed: this slot's reads go to the pool for good.
            case failed
            /// The database closed.
            case closed
        }

        private let lock = Mutex(())
        private var state = State.unopened

        /// Runs `body` with the state when no other thread holds it; nil when one does.
        fileprivate func withStateIfAvailable<R: Sendable>(_ body: (inout State) -> R) -> R? {
            lock.withLockIfAvailable { _ in body(&state) }
        }

        /// Runs `body` with the state, waiting for the thread that holds it.
        fileprivate func withState<R: Sendable>(_ body: (inout State) -> R) -> R {
            lock.withLock { _ in body(&state) }
        }
    }

    /// How many loop connections there can be; loops beyond share them (a busy one sends the
    /// read to the pool).
    static let capacity = 8

    private let slots: [Slot]
    private let path: String
    private let options: DatabaseOptions
    private let metrics: StorageMetrics?
    /// A read's time budget on a loop, in nanoseconds.
    private let budget: UInt64
    /// How long short reads stay off the loops after one overran, in nanoseconds.
    private let pause: UInt64
    /// Until when (monotonic ns) short reads stay off the loops.
    private let pausedUntil = Atomic<UInt64>(0)

    /// Short-read connections of the SQLite file at `path`, opened with `options` when first used.
    init(path: String, options: DatabaseOptions, policy: DatabaseOptions.ShortReads, metrics: StorageMetrics?) {
        slots = (0..<Self.capacity).map { _ in Slot() }
        self.path = path
        self.options = options
        self.metrics = metrics
        budget = Self.nanoseconds(policy.budget)
        pause = Self.nanoseconds(policy.pause)
    }

    /// Runs `body` in a read transaction right here when the calling thread is an event loop
    /// whose connection is open and free and short reads are not paused; else says where to go.
    func attempt<T: Sendable>(_ body: (Connection) throws -> T) -> Attempt<T> {
        guard let index = LoopThread.currentIndex else { return .elsewhere }
        let started = System.monotonicNanoseconds()
        guard started >= pausedUntil.load(ordering: .relaxed) else { return .elsewhere }
        let slot = slots[index % slots.count]
        let attempt = slot.withStateIfAvailable { state -> Attempt<T> in
            switch state {
            case .open(let connection):
                return run(body, on: connection, started: started)
            case .unopened:
                state = .opening
                return .opening(slot)
            case .opening, .failed, .closed:
                return .elsewhere
            }
        }
        return attempt ?? .elsewhere
    }

    /// Opens `slot`'s connection on the calling reader thread; a failure leaves the slot's
    /// reads to the pool.
    func open(_ slot: Slot) {
        let connection: Connection
        do {
            connection = Connection(try SQLiteConnection.open(path: path, role: .reader, options: options, metrics: metrics), metrics: metrics)
        } catch {
            slot.withState { state in
                if case .opening = state { state = .failed }
            }
            return
        }
        connection.stopsAtThreadDeadline()
        let installed = slot.withState { state -> Bool in
            guard case .opening = state else { return false }
            state = .open(connection)
            return true
        }
        if !installed { connection.close() }
    }

    /// Closes every loop connection, waiting for a read running on one; later attempts go to
    /// the pool (which refuses them once closed).
    func close() {
        for slot in slots {
            slot.withState { state in
                if case .open(let connection) = state { connection.close() }
                state = .closed
            }
        }
    }

    /// Counts a short read run in the reader pool.
    func countInPool() {
        metrics?.shortReadsInPool.increment()
    }

    /// Runs `body` on `connection` under the budget; an overrun pauses short reads and sends
    /// this one to the pool, whatever it returned.
    private func run<T: Sendable>(_ body: (Connection) throws -> T, on connection: Connection, started: UInt64) -> Attempt<T> {
        ReadDeadline.set(started + budget)
        let result = Result { try connection.transaction(.read, beginningWith: "BEGIN DEFERRED", body) }
        ReadDeadline.clear()
        // An interrupted statement may leave the transaction open: end it without the deadline.
        if connection.isInTransaction { _ = try? connection.executeScript("ROLLBACK") }
        let finished = System.monotonicNanoseconds()
        guard finished - started < budget else {
            pausedUntil.store(finished + pause, ordering: .relaxed)
            metrics?.shortReadOverruns.increment()
            return .elsewhere
        }
        metrics?.shortReadsOnLoop.increment()
        return .finished(result)
    }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds / 1_000_000_000))
    }
}

/// The deadline of the short read running on the calling thread, which SQLite's progress
/// handler checks (`SQLiteConnection.stopsAtThreadDeadline()`): thread-local, so the handler
/// needs no pointer to the connection or the read.
enum ReadDeadline {
    /// The thread-specific slot: the deadline in monotonic ns as a pointer's bit pattern (nil: none).
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let created = pthread_key_create(&key, nil)
        precondition(created == 0, "pthread_key_create failed: \(created)")
        return key
    }()

    /// Sets the calling thread's deadline (monotonic ns).
    static func set(_ deadline: UInt64) {
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: UInt(max(1, deadline))))
    }

    /// Clears the calling thread's deadline.
    static func clear() {
        pthread_setspecific(key, nil)
    }

    /// Whether the calling thread has a deadline and it has passed.
    static var hasPassed: Bool {
        guard let deadline = pthread_getspecific(key) else { return false }
        return System.monotonicNanoseconds() >= UInt64(UInt(bitPattern: deadline))
    }
}
