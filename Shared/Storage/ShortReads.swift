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
/// - each runs under a budget of work: SQLite counts its instructions and stops the statement
///   once it used up `ShortReads.instructionBudget` (`ReadBudget`); such a read runs again in
///   the reader pool, and every short read goes there for `pause`;
/// - a read that held the loop longer than `stallLimit` for another reason — waiting for a page
///   the OS had to read from the disk, which no count can stop — keeps its answer, and sends
///   the short reads to the pool for `pause` too.
/// A loop therefore loses at most one budget of work, or one stall, per pause.
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
        // only while `lock` is held. Not a speed choice: a `Mutex` cannot hold the connection,
        // which must stay non-Sendable, and still let a body run with it while locked.
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
    /// A read's budget on a loop, in steps of `ReadBudget.instructionsPerStep` instructions.
    private let steps: Int
    /// How long a read may hold a loop before the short reads pause, in nanoseconds.
    private let stallLimit: UInt64
    /// How long short reads stay off the loops after one overran or stalled, in nanoseconds.
    private let pause: UInt64
    /// Until when (monotonic ns) short reads stay off the loops.
    private let pausedUntil = Atomic<UInt64>(0)

    /// Short-read connections of the SQLite file at `path`, opened with `options` when first used.
    init(path: String, options: DatabaseOptions, policy: DatabaseOptions.ShortReads, metrics: StorageMetrics?) {
        slots = (0..<Self.capacity).map { _ in Slot() }
        self.path = path
        self.options = options
        self.metrics = metrics
        steps = max(1, policy.instructionBudget / ReadBudget.instructionsPerStep)
        stallLimit = Self.nanoseconds(policy.stallLimit)
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
            // No busy wait on a loop: a read that finds the database locked (recovery, another
            // process) is handed to the pool, whose connections wait.
            var loopOptions = options
            loopOptions.busyTimeout = .zero
            connection = Connection(
                try SQLiteConnection.open(path: path, role: .reader, options: loopOptions, metrics: metrics), metrics: metrics)
        } catch {
            slot.withState { state in
                if case .opening = state { state = .failed }
            }
            return
        }
        connection.stopsAtThreadBudget()
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

    /// Runs `body` on `connection` under the budget: one that used it up runs again in the
    /// pool, whatever it returned; both it and one that stalled the loop pause short reads.
    private func run<T: Sendable>(_ body: (Connection) throws -> T, on connection: Connection, started: UInt64) -> Attempt<T> {
        ReadBudget.start(steps: steps)
        let result = Result { try connection.transaction(.read, beginningWith: "BEGIN DEFERRED", body) }
        let overran = ReadBudget.end()
        // A stopped statement may leave the transaction open: end it, with no budget set.
        if connection.isInTransaction { _ = try? connection.executeScript("ROLLBACK") }
        let finished = System.monotonicNanoseconds()
        if overran || finished - started > stallLimit {
            pausedUntil.store(finished + pause, ordering: .relaxed)
            metrics?.shortReadOverruns.increment()
        }
        guard !overran else { return .elsewhere }
        if case .failure(let error as StorageError) = result, error.isBusy { return .elsewhere }
        metrics?.shortReadsOnLoop.increment()
        return .finished(result)
    }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds / 1_000_000_000))
    }
}

/// The budget of the short read running on the calling thread, which SQLite's progress
/// handler spends (`SQLiteConnection.stopsAtThreadBudget()`): thread-local, so the handler
/// needs no pointer to the connection or the read.
enum ReadBudget {
    /// How many virtual-machine instructions one step of the budget is (how often SQLite calls
    /// the progress handler).
    static let instructionsPerStep = 1_000

    /// The thread-specific slot: the steps left + 1 as a pointer's bit pattern (nil: no budget),
    /// or `overran` once they ran out. Not a speed choice: a pthread key is the thread-local
    /// storage Swift has on Linux; the pointer only carries an integer, nothing is read through it.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let created = pthread_key_create(&key, nil)
        precondition(created == 0, "pthread_key_create failed: \(created)")
        return key
    }()
    /// The slot's value once the budget ran out.
    private static let overran = UInt.max

    /// Gives the calling thread a budget of `steps` steps.
    static func start(steps: Int) {
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: UInt(steps) + 1))
    }

    /// Ends the calling thread's budget; returns whether it ran out.
    static func end() -> Bool {
        let value = pthread_getspecific(key).map { UInt(bitPattern: $0) }
        pthread_setspecific(key, nil)
        return value == overran
    }

    /// Spends one step of the calling thread's budget: false once it has run out (the
    /// statement stops), true while some is left or when the thread has no budget.
    static func takeStep() -> Bool {
        guard let value = pthread_getspecific(key).map({ UInt(bitPattern: $0) }) else { return true }
        guard value != overran, value > 1 else {
            pthread_setspecific(key, UnsafeRawPointer(bitPattern: overran))
            return false
        }
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: value - 1))
        return true
    }
}
