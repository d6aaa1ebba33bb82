package import Telemetry

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
        metrics: MetricsRegistry? = nil
    ) {
        precondition(readerCount >= 0, "readerCount must not be negative")
        precondition(statementCacheCapacity >= 0, "statementCacheCapacity must not be negative")
        self.synchronous = synchronous
        self.busyTimeout = busyTimeout
        self.readerCount = readerCount
        self.statementCacheCapacity = statementCacheCapacity
        self.postgreSQLConnectionCount = postgreSQLConnectionCount
        self.serializationRetries = serializationRetries
        self.applicationName = applicationName
        self.metrics = metrics
    }

    /// The busy timeout in whole milliseconds, as `sqlite3_busy_timeout` takes it.
    var busyTimeoutMilliseconds: Int32 {
        let (seconds, attoseconds) = busyTimeout.components
        let milliseconds = seconds * 1_000 + attoseconds / 1_000_000_000_000_000
        return Int32(clamping: max(0, milliseconds))
    }
}
