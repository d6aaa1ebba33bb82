import Telemetry
#if canImport(Glibc)
private import Glibc
#else
private import Darwin
#endif

/// What a `Database` records in its process's `MetricsRegistry` (`DatabaseOptions.metrics`):
/// query durations by statement, transaction durations, retries, waits for a connection,
/// commits, and the SQLite WAL's size or the PostgreSQL pool's state.
///
/// Every series is registered when the database opens, or — a statement's — when the
/// statement is prepared, and kept with it; recording is then a relaxed atomic add, no lock
/// and no lookup. Each service process opens one database, so the series carry no label
/// naming it: two databases given one registry add to the same series (and the WAL size is
/// the last one's).
///
/// Thread-safe (`Sendable`): its metrics are atomics; its registry takes its own lock.
final class StorageMetrics: Sendable {
    /// Which transactions a duration counts: `Database.read(_:)`'s or `Database.write(_:)`'s.
    enum TransactionKind: String {
        case read, write
    }

    /// Which pool of connections a transaction waited in: SQLite's readers or its one writer,
    /// or PostgreSQL's pool (which serves both).
    enum PoolKind: String {
        case reader, writer, postgresql
    }

    /// Why a transaction was run again from the start.
    enum RetryReason: String {
        /// PostgreSQL reported a serialization conflict or a deadlock.
        case serialization
        /// The connection was lost before the transaction began (or, for a read, at any time)
        /// and was opened again.
        case reconnection
    }

    /// Where a PostgreSQL connection of the pool stands, for `storage_postgresql_connections`.
    enum ConnectionState: String {
        /// Open, waiting for a transaction.
        case idle
        /// Running a transaction (or reconnecting before one).
        case busy
        /// Lost its connection to the server; it reconnects when next used.
        case broken
    }

    private let registry: MetricsRegistry
    private let readTransactions: Histogram
    private let writeTransactions: Histogram
    private let serializationRetries: Counter
    private let reconnectionRetries: Counter
    /// Committed write transactions.
    private let commits: Counter
    /// The pool's connections by state, on PostgreSQL; nil on SQLite.
    private let connectionStates: (idle: Gauge, busy: Gauge, broken: Gauge)?
    /// How many writes each SQLite write transaction held (`GroupCommit`).
    let writeGroupSizes: Histogram
    /// Short reads (`Database.shortRead(_:)`) run on the calling event loop's thread.
    let shortReadsOnLoop: Counter
    /// Short reads sent to the reader pool: called off a loop, the loop's connection not open
    /// (yet) or busy, short reads paused, or the read run again after it overran.
    let shortReadsInPool: Counter
    /// Short reads on a loop that used up their budget or stalled it (each paused short reads).
    let shortReadOverruns: Counter

    /// Registers the series of the database at `location`, opened with `options`, in `registry`.
    init(registry: MetricsRegistry, location: DatabaseLocation, synchronous: DatabaseOptions.Synchronous) {
        self.registry = registry
        let transactionHelp =
            "How long transactions took, from BEGIN to COMMIT or ROLLBACK, in seconds. A PostgreSQL transaction run again "
            + "after a serialization conflict counts once per attempt (see storage_transaction_retries_total)."
        readTransactions = registry.histogram(
            "storage_transaction_duration_seconds", help: transactionHelp, buckets: .durations, labels: ["kind": "read"])
        writeTransactions = registry.histogram(
            "storage_transaction_duration_seconds", help: transactionHelp, buckets: .durations, labels: ["kind": "write"])
        let retryHelp =
            "Transactions run again from the start: after a PostgreSQL serialization conflict or deadlock, or after "
            + "reconnecting to a server that closed the connection. (SQLite waits for its locks instead of retrying.)"
        serializationRetries = registry.counter(
            "storage_transaction_retries_total", help: retryHelp, labels: ["reason": RetryReason.serialization.rawValue])
        reconnectionRetries = registry.counter(
            "storage_transaction_retries_total", help: retryHelp, labels: ["reason": RetryReason.reconnection.rawValue])
        commits = registry.counter(
            "storage_commits_total",
            help: "Write transactions committed. synchronous=\"true\" (SQLite synchronous=FULL, PostgreSQL "
                + "synchronous_commit=on): each commit that changed data waited for an fsync of the WAL, so this "
                + "counts the fsyncs commits cost; \"false\": commits returned before the disk was synced.",
            labels: ["synchronous": Self.waitsForDisk(location: location, synchronous: synchronous) ? "true" : "false"])
        writeGroupSizes = registry.histogram(
            "storage_write_group_size",
            help: "How many callers' writes each SQLite write transaction committed together (group commit: one "
                + "fsync for all of them at synchronous=FULL).",
            buckets: HistogramBuckets(bounds: [1, 2, 4, 8, 16, 32, 64, 128], scale: 1))
        let shortReadHelp =
            "Short reads (point lookups, pages of an index) by where they ran: on the event loop that holds the call, "
            + "or handed to the reader pool (called elsewhere, the loop's connection busy or not open yet, or paused)."
        shortReadsOnLoop = registry.counter("storage_short_reads_total", help: shortReadHelp, labels: ["where": "event_loop"])
        shortReadsInPool = registry.counter("storage_short_reads_total", help: shortReadHelp, labels: ["where": "reader_pool"])
        shortReadOverruns = registry.counter(
            "storage_short_read_overruns_total",
            help: "Short reads on an event loop that used up their budget of work (each then run again in the reader "
                + "pool) or held the loop past the stall limit (a disk wait): after each, short reads left the loops "
                + "for a pause.")
        switch location {
        case .sqlite(let path):
            connectionStates = nil
            if !SQLiteConnection.isInMemory(path: path) {
                let wal = path + "-wal"
                registry.sampled(
                    "storage_sqlite_wal_bytes", type: .gauge,
                    help: "Size of the SQLite write-ahead log (the -wal file) in bytes, read when scraped; it "
                        + "shrinks only when a checkpoint truncates it.",
                    read: { Double(Self.fileSize(atPath: wal)) })
            }
        case .postgresql:
            let help = "The PostgreSQL pool's connections by state: idle, busy (running a transaction), broken (lost, "
                + "reopened when next used)."
            connectionStates = (
                registry.gauge("storage_postgresql_connections", help: help, labels: ["state": ConnectionState.idle.rawValue]),
                registry.gauge("storage_postgresql_connections", help: help, labels: ["state": ConnectionState.busy.rawValue]),
                registry.gauge("storage_postgresql_connections", help: help, labels: ["state": ConnectionState.broken.rawValue])
            )
        }
    }

    /// The histogram of `kind`'s transaction durations.
    @inline(__always)
    func transactionDurations(_ kind: TransactionKind) -> Histogram {
        switch kind {
        case .read: readTransactions
        case .write: writeTransactions
        }
    }

    /// Counts a write transaction committed.
    @inline(__always)
    func countCommit() {
        commits.increment()
    }

    /// Counts a transaction run again, for `reason`.
    func countRetry(_ reason: RetryReason) {
        switch reason {
        case .serialization: serializationRetries.increment()
        case .reconnection: reconnectionRetries.increment()
        }
    }

    /// The histogram of how long transactions waited for a connection of `pool`: registered
    /// when the pool starts.
    func poolWaits(_ pool: PoolKind) -> Histogram {
        registry.histogram(
            "storage_pool_wait_seconds",
            help: "How long a transaction waited for a connection, from the call to a connection taking it, in seconds.",
            buckets: .durations, labels: ["kind": pool.rawValue])
    }

    /// The histogram of the query durations of the statement `sql`, or nil when it is not
    /// timed (transaction control): looked up once, when the statement is prepared.
    func queryDurations(sql: String) -> Histogram? {
        guard let statement = StatementLabel.of(sql) else { return nil }
        return registry.histogram(
            "storage_query_duration_seconds",
            help: "How long statements took to run (preparing them when not cached, binding, reading every row), in "
                + "seconds, by statement: its verb and first table.",
            buckets: .durations, labels: ["statement": statement])
    }

    /// Moves one PostgreSQL connection from the state `old` to `new` (nil: not counted, before
    /// it opened or after it closed). Does nothing on SQLite.
    func moveConnection(from old: ConnectionState?, to new: ConnectionState?) {
        guard let connectionStates, old != new else { return }
        func gauge(_ state: ConnectionState) -> Gauge {
            switch state {
            case .idle: connectionStates.idle
            case .busy: connectionStates.busy
            case .broken: connectionStates.broken
            }
        }
        if let old { gauge(old).decrement() }
        if let new { gauge(new).increment() }
    }

    /// Whether a commit at `synchronous` waits for the disk: never for an in-memory database.
    private static func waitsForDisk(location: DatabaseLocation, synchronous: DatabaseOptions.Synchronous) -> Bool {
        if case .sqlite(let path) = location, SQLiteConnection.isInMemory(path: path) { return false }
        return synchronous == .full
    }

    /// The size of the file at `path` in bytes; 0 when it does not exist (no WAL yet, or
    /// removed when the last connection closed).
    private static func fileSize(atPath path: String) -> Int64 {
        var status = stat()
        guard stat(path, &status) == 0 else { return 0 }
        return Int64(status.st_size)
    }
}

extension Histogram {
    /// Records the time from `start` to now.
    @inline(__always)
    func observe(since start: ContinuousClock.Instant) {
        observe(start.duration(to: .now))
    }
}
