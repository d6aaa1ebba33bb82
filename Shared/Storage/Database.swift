/// One service's database — a SQLite file, or a schema of a PostgreSQL database — with its
/// connections on their own threads and the schema migrations applied when it opens.
///
/// Thread-safe (`Sendable`): every operation may be called from any task at once. All mutable
/// state lives in the worker pools, whose queues are guarded by a lock, and each SQLite
/// connection is confined to its own thread. Writes are serialized in process, one
/// transaction at a time in submission order; reads run concurrently with writes and each
/// other, each on a consistent snapshot (WAL mode). Neither blocks the caller's thread: the
/// caller's task suspends until a worker thread has run its closure. Once called, a read or
/// write runs to completion even if the calling task is cancelled, so an acknowledged write is
/// never half-applied; check `Task.isCancelled` before calling when that matters.
///
/// ```swift
/// let database = try await Database(path: dataDirectory + "/auth.sqlite", migrations: [
///     Migration("create users", sql: "CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT UNIQUE NOT NULL)"),
/// ])
/// let id = try await database.write { connection in
///     try connection.execute("INSERT INTO users (email) VALUES (?)", [email])
///     return connection.lastInsertRowID
/// }
/// let count = try await database.read { try $0.queryValue("SELECT count(*) FROM users", as: Int.self) }
/// await database.close()
/// ```
///
/// A file database is opened in WAL mode with `PRAGMA foreign_keys=ON`, the configured
/// `synchronous` level and busy timeout. An in-memory database (`":memory:"`) exists only in
/// its writer connection, so its reads are served by the writer too (in a `query_only`
/// transaction); it is meant for tests of stores.
///
/// On PostgreSQL (`Database(location: .postgresql(…), …)`) a pool of connections, each on its
/// own thread, runs reads and writes alike, and many processes may share the database. A
/// write runs at `SERIALIZABLE` isolation and is run again from the start when PostgreSQL
/// reports a serialization conflict or a deadlock: the same guarantee as SQLite's one writer
/// (every write sees the result of every write committed before it, across every replica), so
/// a store's read-check-write needs no lock of its own. Its body must therefore have no effect
/// outside the database. A read runs in a `REPEATABLE READ READ ONLY` transaction: one
/// snapshot, as on SQLite.
package final class Database: Sendable {
    /// Where the database is.
    package let location: DatabaseLocation
    /// The SQL dialect its connections speak.
    package var dialect: SQLDialect { location.dialect }
    /// The path the database was opened with (SQLite), or the location's description.
    package var path: String {
        if case .sqlite(let path) = location { return path }
        return location.description
    }
    /// The thread and connection that run every write (and every read of an in-memory
    /// database) on SQLite; every connection of the pool on PostgreSQL.
    private let writer: WorkerPool
    /// SQLite's read-only connections, or nil when reads go to the writer pool.
    private let readers: WorkerPool?
    /// SQLite's writes, grouped into shared transactions; nil on PostgreSQL.
    private let groupCommit: GroupCommit?
    /// The event loops' connections for short reads (SQLite files with readers), or nil when
    /// short reads go to the reader pool like every read.
    private let shortReaders: ShortReaders?
    /// How often a PostgreSQL transaction is run again after a serialization conflict.
    private let serializationRetries: Int

    /// Opens (creating if needed) the SQLite database at `path` and applies the pending
    /// `migrations`.
    ///
    /// Opening and migrating run on the new writer thread, not on the caller's.
    ///
    /// - Parameters:
    ///   - path: A file path whose directory exists, or `":memory:"` for a private in-memory
    ///     database.
    ///   - options: Durability, busy timeout, reader count, statement cache size and where
    ///     metrics are recorded.
    ///   - migrations: The database's whole schema history, in order (see `Migration`).
    /// - Throws: `StorageError`: `isCannotOpen` when the directory does not exist or the file
    ///   cannot be opened; the failing step's error when a migration fails.
    package convenience init(path: String, options: DatabaseOptions = .init(), migrations: [Migration] = []) async throws {
        try await self.init(location: .sqlite(path: path), options: options, migrations: .init(sqlite: migrations, postgresql: []))
    }

    /// Opens the database at `location` and applies the pending migrations of its dialect.
    ///
    /// - Throws: `StorageError`: `isCannotOpen` when the file cannot be opened or the server
    ///   cannot be reached; the failing step's error when a migration fails.
    package init(location: DatabaseLocation, options: DatabaseOptions = .init(), migrations: Migrations) async throws {
        let metrics = options.metrics.map { StorageMetrics(registry: $0, location: location, synchronous: options.synchronous) }
        switch location {
        case .sqlite(let path):
            let writer = try await WorkerPool.start(name: "storage-writer", count: 1, waits: metrics?.poolWaits(.writer)) {
                Connection(try SQLiteConnection.open(path: path, role: .writer, options: options, metrics: metrics), metrics: metrics)
            }
            var readers: WorkerPool?
            do {
                _ = try await writer.submit { connection in try connection.migrate(migrations.sqlite) }
                // Readers open after the writer has set up WAL mode and the schema.
                if options.readerCount > 0 && !SQLiteConnection.isInMemory(path: path) {
                    readers = try await WorkerPool.start(
                        name: "storage-reader", count: options.readerCount, waits: metrics?.poolWaits(.reader)
                    ) {
                        Connection(try SQLiteConnection.open(path: path, role: .reader, options: options, metrics: metrics), metrics: metrics)
                    }
                }
            } catch {
                await writer.shutdown()
                throw error
            }
            self.writer = writer
            self.readers = readers
            groupCommit = GroupCommit(writer: writer, limit: options.writeGroupLimit, metrics: metrics)
            shortReaders = readers == nil ? nil : options.shortReads.map {
                ShortReaders(path: path, options: options, policy: $0, metrics: metrics)
            }
        case .postgresql(let url, let schema, let password):
            let pool = try await WorkerPool.start(
                name: "storage-pg", count: max(1, options.postgreSQLConnectionCount), waits: metrics?.poolWaits(.postgresql)
            ) {
                Connection(
                    try PostgreSQLSession(url: url, password: password, schema: schema, options: options, metrics: metrics),
                    metrics: metrics)
            }
            do {
                _ = try await pool.submit { connection in try connection.migrate(migrations.postgresql) }
            } catch {
                await pool.shutdown()
                throw error
            }
            self.writer = pool
            self.readers = nil
            groupCommit = nil
            shortReaders = nil
        }
        self.location = location
        self.serializationRetries = options.serializationRetries
    }

    deinit {
        // Without close(), the threads still finish the queued work, then close their
        // connections and end.
        shortReaders?.close()
        readers?.requestShutdown()
        writer.requestShutdown()
    }

    /// Runs `body` in a write transaction and returns its result.
    ///
    /// On SQLite the transaction starts with `BEGIN IMMEDIATE` on the writer thread, taking
    /// the write lock before the first read, so a read-then-write in `body` cannot be
    /// invalidated by another writer; writes run one at a time, in the order they were called.
    /// The writes waiting when the writer is free share one transaction and its commit, each
    /// in a savepoint of its own (`GroupCommit`): a body that throws has only its own changes
    /// rolled back, and every caller returns once the commit holding its write is durable.
    /// On PostgreSQL it runs at `SERIALIZABLE` isolation and, when it loses a serialization
    /// conflict or a deadlock, is rolled back and run again (up to
    /// `DatabaseOptions.serializationRetries` times). On both, `body` may run more than once
    /// (on SQLite when a shared transaction fails as a whole and its writes run again alone)
    /// and must have no effect outside the database. It commits when `body` returns and rolls
    /// back when `body` (or the commit) throws; the error is rethrown unchanged.
    ///
    /// - Throws: What `body` throws; `StorageError` from the database (`isBusy` when the
    ///   retries ran out), or `isMisuse` after `close()`.
    @discardableResult
    package func write<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        let retries = serializationRetries
        switch location {
        case .sqlite:
            return try await groupCommit!.write(body)
        case .postgresql:
            return try await writer.submit { connection in
                try connection.postgresql!.retrying(writes: true, retries: retries) {
                    try connection.transaction(.write, beginningWith: "BEGIN ISOLATION LEVEL SERIALIZABLE", body)
                }
            }
        }
    }

    /// Runs `body` in a read-only transaction on a reader connection and returns its result.
    ///
    /// Every query in `body` sees the same snapshot: the data committed before its first
    /// query, and no later write. Writing in `body` fails with `StorageError.isReadOnly`.
    ///
    /// - Throws: What `body` throws; `StorageError` from the database, or `isMisuse` after
    ///   `close()`.
    package func read<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        let retries = serializationRetries
        if case .postgresql = location {
            return try await writer.submit { connection in
                try connection.postgresql!.retrying(writes: false, retries: retries) {
                    try connection.transaction(.read, beginningWith: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", body)
                }
            }
        }
        if let readers {
            return try await readers.submit { connection in
                try connection.transaction(.read, beginningWith: "BEGIN DEFERRED", body)
            }
        }
        return try await writer.submit { connection in
            try connection.execute("PRAGMA query_only = ON")
            defer { _ = try? connection.execute("PRAGMA query_only = OFF") }
            return try connection.transaction(.read, beginningWith: "BEGIN DEFERRED", body)
        }
    }

    /// How many writes wait for the SQLite writer to take them into a group (0 on PostgreSQL).
    /// For tests and diagnostics.
    package var writesWaiting: Int {
        groupCommit?.waitingCount ?? 0
    }

    /// Runs `body` like `read(_:)`, on the calling event loop's thread when it can: for reads
    /// that are short by construction — a lookup by key, a page of an index with a `LIMIT` —
    /// so that answering them needs no other thread.
    ///
    /// On an event loop (`LoopThread`) of a SQLite file database, the read runs right here on
    /// that loop's own read-only connection, under `DatabaseOptions.shortReads`' budget of
    /// work: past it SQLite stops the read, which then runs again in the reader pool, and short
    /// reads stay off the loops for a pause (as after a read that stalled the loop, on the
    /// disk). Anywhere else (another thread, PostgreSQL, an in-memory
    /// database, short reads off) it is `read(_:)`. `body` may therefore run twice and must
    /// have no effect but its result.
    ///
    /// - Throws: What `body` throws; `StorageError` from the database, or `isMisuse` after
    ///   `close()`.
    package func shortRead<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        guard let shortReaders, let readers else { return try await read(body) }
        switch shortReaders.attempt(body) {
        case .finished(let result):
            return try result.get()
        case .elsewhere:
            shortReaders.countInPool()
            return try await read(body)
        case .opening(let slot):
            shortReaders.countInPool()
            return try await readers.submit { connection in
                shortReaders.open(slot)
                return try connection.transaction(.read, beginningWith: "BEGIN DEFERRED", body)
            }
        }
    }

    /// `shortRead(_:)` without suspending, for a handler that answers without a task: runs
    /// `body` right here and returns its result when the calling thread is an event loop whose
    /// connection is open and free (and short reads are not paused); nil when the read must go
    /// elsewhere — call `shortRead(_:)` then. A loop's first call starts opening its connection
    /// in the reader pool and returns nil.
    package func shortReadNow<T: Sendable>(_ body: (Connection) throws -> T) -> Result<T, any Error>? {
        guard let shortReaders, let readers else { return nil }
        switch shortReaders.attempt(body) {
        case .finished(let result):
            return result
        case .elsewhere:
            return nil
        case .opening(let slot):
            // Refused only once the database closes: the slot then never opens, as it should not.
            _ = readers.execute { connection in
                shortReaders.open(slot)
                connection.didRunJob()
            }
            return nil
        }
    }

    /// Lets the reads and writes already called finish, then finalizes every statement,
    /// closes every connection and ends the threads. Later reads and writes throw
    /// `StorageError` with `isMisuse`. Calling it again does nothing.
    package func close() async {
        // The writer closes last: the last connection to close checkpoints the WAL.
        shortReaders?.close()
        await readers?.shutdown()
        await writer.shutdown()
    }
}

/// A database's schema history, for each dialect: the same tables, each written in its
/// dialect's SQL (see `Migration`).
package struct Migrations: Sendable {
    /// The steps for SQLite, versioned in `PRAGMA user_version`.
    package var sqlite: [Migration]
    /// The steps for PostgreSQL, versioned in the schema's `storage_schema_version` table.
    package var postgresql: [Migration]

    /// Both histories; a service that does not run on PostgreSQL yet passes none for it.
    package init(sqlite: [Migration], postgresql: [Migration]) {
        self.sqlite = sqlite
        self.postgresql = postgresql
    }
}
