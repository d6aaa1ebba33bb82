/// One SQLite database: a writer connection on its own thread, a small pool of read-only
/// connections on theirs, and the schema migrations applied when it opens.
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
package final class Database: Sendable {
    /// The path the database was opened with.
    package let path: String
    /// The thread and connection that run every write (and every read of an in-memory database).
    private let writer: WorkerPool
    /// The read-only connections, or nil when reads go to the writer.
    private let readers: WorkerPool?

    /// Opens (creating if needed) the database at `path` and applies the pending `migrations`.
    ///
    /// Opening and migrating run on the new writer thread, not on the caller's.
    ///
    /// - Parameters:
    ///   - path: A file path whose directory exists, or `":memory:"` for a private in-memory
    ///     database.
    ///   - options: Durability, busy timeout, reader count and statement cache size.
    ///   - migrations: The database's whole schema history, in order (see `Migration`).
    /// - Throws: `StorageError`: `isCannotOpen` when the directory does not exist or the file
    ///   cannot be opened; the failing step's error when a migration fails.
    package init(path: String, options: DatabaseOptions = .init(), migrations: [Migration] = []) async throws {
        let writer = try await WorkerPool.start(name: "storage-writer", count: 1) {
            try Connection.open(path: path, role: .writer, options: options)
        }
        var readers: WorkerPool?
        do {
            _ = try await writer.submit { connection in try connection.migrate(migrations) }
            // Readers open after the writer has set up WAL mode and the schema.
            if options.readerCount > 0 && !Connection.isInMemory(path: path) {
                readers = try await WorkerPool.start(name: "storage-reader", count: options.readerCount) {
                    try Connection.open(path: path, role: .reader, options: options)
                }
            }
        } catch {
            await writer.shutdown()
            throw error
        }
        self.path = path
        self.writer = writer
        self.readers = readers
    }

    deinit {
        // Without close(), the threads still finish the queued work, then close their
        // connections and end.
        readers?.requestShutdown()
        writer.requestShutdown()
    }

    /// Runs `body` in a write transaction on the writer thread and returns its result.
    ///
    /// The transaction starts with `BEGIN IMMEDIATE`, taking the write lock before the first
    /// read, so a read-then-write in `body` cannot be invalidated by another writer. It commits
    /// when `body` returns and rolls back when `body` (or the commit) throws; the error is
    /// rethrown unchanged. Writes run one at a time, in the order they were called.
    ///
    /// - Throws: What `body` throws; `StorageError` from SQLite, or `isMisuse` after `close()`.
    @discardableResult
    package func write<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await writer.submit { connection in
            try connection.transaction(beginningWith: "BEGIN IMMEDIATE", body)
        }
    }

    /// Runs `body` in a read-only transaction on a reader connection and returns its result.
    ///
    /// Every query in `body` sees the same snapshot: the data committed before its first
    /// query, and no later write. Writing in `body` fails with `StorageError.isReadOnly`.
    ///
    /// - Throws: What `body` throws; `StorageError` from SQLite, or `isMisuse` after `close()`.
    package func read<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        if let readers {
            return try await readers.submit { connection in
                try connection.transaction(beginningWith: "BEGIN DEFERRED", body)
            }
        }
        return try await writer.submit { connection in
            try connection.execute("PRAGMA query_only = ON")
            defer { _ = try? connection.execute("PRAGMA query_only = OFF") }
            return try connection.transaction(beginningWith: "BEGIN DEFERRED", body)
        }
    }

    /// Lets the reads and writes already called finish, then finalizes every statement,
    /// closes every connection and ends the threads. Later reads and writes throw
    /// `StorageError` with `isMisuse`. Calling it again does nothing.
    package func close() async {
        // The writer closes last: the last connection to close checkpoints the WAL.
        await readers?.shutdown()
        await writer.shutdown()
    }
}
