package import Telemetry
private import Foundation

/// How a `Database` opens and runs its connections.
///
/// The defaults suit data whose acknowledged writes must survive a power loss (accounts,
/// orders). A service may choose `.normal` synchronization only where losing the last
/// moments of writes after a power loss is harmless, and should say so where it does.
package struct DatabaseOptions: Sendable {
    /// When SQLite waits for the disk: `PRAGMA synchronous` in WAL mode.
    package enum Synchronous: String, Sendable, Hashable {
        /// Every commit is on disk before it returns (fsync of the WAL on each commit): an
        /// acknowledged write survives power loss.
        case full = "FULL"
        /// Commits return once written to the WAL; the disk is synced at checkpoints. The
        /// database stays consistent, but the last commits can be lost on power loss (not on
        /// a process crash).
        case normal = "NORMAL"
    }

    /// How reads a store declares short (`Database.shortRead(_:)`) may run on the event loop
    /// that calls them: how much work one may do there, how long it may hold the loop before
    /// the loops stop taking short reads, and for how long they stop.
    package struct ShortReads: Sendable, Hashable {
        /// The most SQLite virtual-machine instructions a short read may run on a loop (counted
        /// in steps of 1,000); past it SQLite stops the read, which runs again in the reader
        /// pool. Work, not time: a loop's thread held off its core does not use it up.
        package var instructionBudget: Int
        /// A short read that held its loop longer than this, whatever for — above all a page
        /// the OS had to read from the disk, which no budget can stop — keeps its answer but
        /// sends the short reads to the pool for a pause.
        package var stallLimit: Duration
        /// How long every short read goes to the reader pool after one overran its budget or
        /// stalled.
        package var pause: Duration

        /// 500,000 instructions — a lookup by key runs a few dozen, a page of 20 a few
        /// thousand; the budget is a few milliseconds of work — a stall limit of 50 ms, and a
        /// pause of 250 ms: a loop loses at most a budget's work or one stall per pause.
        package init(instructionBudget: Int = 500_000, stallLimit: Duration = .milliseconds(50), pause: Duration = .milliseconds(250)) {
            precondition(instructionBudget >= 1_000, "instructionBudget is counted in steps of 1,000")
            self.instructionBudget = instructionBudget
            self.stallLimit = stallLimit
            self.pause = pause
        }
    }

    /// The durability of commits; `.full` by default. On PostgreSQL `.full` is
    /// `synchronous_commit = on` (a commit returns once its WAL is flushed) and `.normal` is
    /// `off`.
    package var synchronous: Synchronous
    /// How long a statement waits for another process's lock before failing with `isBusy`.
    package var busyTimeout: Duration
    /// How many read-only connections (each with its own thread) serve `Database.read(_:)`;
    /// 0 routes reads to the writer. In-memory databases always use the writer.
    package var readerCount: Int
    /// How many prepared statements each connection keeps, least recently used evicted first;
    /// 0 compiles every statement anew.
    package var statementCacheCapacity: Int
    /// How many connections (each with its own thread) a PostgreSQL database opens; reads and
    /// writes share them. Every replica of every service opens this many, so it counts
    /// against the server's `max_connections`.
    package var postgreSQLConnectionCount: Int
    /// How often a PostgreSQL transaction that lost a serialization conflict or a deadlock is
    /// run again before the error (`isBusy`) reaches the caller.
    package var serializationRetries: Int
    /// The `application_name` of every PostgreSQL connection: how the process shows in the
    /// server's `pg_stat_activity`, where other replicas can see whether it still runs.
    package var applicationName: String?
    /// The most callers' writes one SQLite write transaction commits together (`GroupCommit`):
    /// the writes waiting when the writer is free share a transaction and its fsync; 1 gives
    /// each write a transaction of its own. PostgreSQL groups commits itself.
    package var writeGroupLimit: Int
    /// Whether and how short reads run on the calling event loop (SQLite files only); nil
    /// sends them to the reader pool like every read.
    package var shortReads: ShortReads?
    /// Where the database records its query, transaction and pool metrics (`StorageMetrics`);
    /// nil, the default, records nothing.
    package var metrics: MetricsRegistry?

    /// Creates options; every parameter has the production default.
    package init(
        synchronous: Synchronous = .full,
        busyTimeout: Duration = .seconds(5),
        readerCount: Int = 2,
        statementCacheCapacity: Int = 64,
        postgreSQLConnectionCount: Int = 4,
        serializationRetries: Int = 20,
        applicationName: String? = nil,
        writeGroupLimit: Int = ProcessDefaults.writeGroupLimit,
        shortReads: ShortReads? = ProcessDefaults.shortReads,
        metrics: MetricsRegistry? = nil
    ) {
        precondition(writeGroupLimit >= 1, "writeGroupLimit must be at least 1")
        precondition(readerCount >= 0, "readerCount must not be negative")
        precondition(statementCacheCapacity >= 0, "statementCacheCapacity must not be negative")
        self.synchronous = synchronous
        self.busyTimeout = busyTimeout
        self.readerCount = readerCount
        self.statementCacheCapacity = statementCacheCapacity
        self.postgreSQLConnectionCount = postgreSQLConnectionCount
        self.serializationRetries = serializationRetries
        self.applicationName = applicationName
        self.writeGroupLimit = writeGroupLimit
        self.shortReads = shortReads
        self.metrics = metrics
    }

    /// The busy timeout in whole milliseconds, as `sqlite3_busy_timeout` takes it.
    var busyTimeoutMilliseconds: Int32 {
        let (seconds, attoseconds) = busyTimeout.components
        let milliseconds = seconds * 1_000 + attoseconds / 1_000_000_000_000_000
        return Int32(clamping: max(0, milliseconds))
    }
}

/// The process-wide defaults of the options an operator (or a benchmark comparing the two ways)
/// may change without a flag per service, read once from the environment:
/// `SHOP_WRITE_GROUP_LIMIT=N` (1 gives every write a transaction of its own; default 64) and
/// `SHOP_SHORT_READS=off` (every read in the reader pool). A value that does not parse keeps
/// the default.
enum ProcessDefaults {
    /// `DatabaseOptions.writeGroupLimit`'s default.
    static let writeGroupLimit: Int = {
        guard let text = ProcessInfo.processInfo.environment["SHOP_WRITE_GROUP_LIMIT"], let limit = Int(text), limit >= 1
        else { return 64 }
        return min(limit, 1_024)
    }()

    /// `DatabaseOptions.shortReads`' default.
    static let shortReads: DatabaseOptions.ShortReads? =
        ProcessInfo.processInfo.environment["SHOP_SHORT_READS"] == "off" ? nil : DatabaseOptions.ShortReads()
}
