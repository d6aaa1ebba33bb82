/// One connection to a service's database, SQLite or PostgreSQL: what the closures given to
/// `Database.write(_:)` and `Database.read(_:)` run SQL through.
///
/// Not `Sendable`, on purpose: a connection is created on its worker thread and used only
/// there, one job at a time. Do not keep it beyond the closure it was passed to.
///
/// Parameters are positional (`?`) and bound from Swift values, whatever the backend (on
/// PostgreSQL they are numbered `$1`, `$2` … before the statement is prepared):
///
/// ```swift
/// try connection.execute("INSERT INTO users (email, name) VALUES (?, ?)", [email, nil])
/// let rows = try connection.query("SELECT id, email FROM users WHERE id > ?", [lastID])
/// ```
///
/// Most SQL the stores write reads the same in both dialects (`ON CONFLICT … DO UPDATE`,
/// `RETURNING`, `coalesce`); where it differs, a store switches on `dialect` and keeps both
/// texts side by side.
package final class Connection {
    private enum Backend {
        case sqlite(SQLiteConnection)
        case postgresql(PostgreSQLSession)
    }

    private let backend: Backend
    /// Where transactions and the pool state are recorded; nil records nothing.
    private let metrics: StorageMetrics?
    /// Where this connection is counted in `storage_postgresql_connections`: nil before it is
    /// (SQLite, or no metrics) and after it closed.
    private var countedState: StorageMetrics.ConnectionState?

    /// The connection of a SQLite database, recording into `metrics`.
    init(_ connection: SQLiteConnection, metrics: StorageMetrics? = nil) {
        backend = .sqlite(connection)
        self.metrics = metrics
    }

    /// The connection of a PostgreSQL database, counted idle in `metrics` until it runs a job.
    init(_ session: PostgreSQLSession, metrics: StorageMetrics? = nil) {
        backend = .postgresql(session)
        self.metrics = metrics
        count(as: .idle)
    }

    /// The SQL dialect of the database behind this connection.
    package var dialect: SQLDialect {
        switch backend {
        case .sqlite: .sqlite
        case .postgresql: .postgresql
        }
    }

    /// The PostgreSQL session, for the PostgreSQL-only parts of the storage layer.
    var postgresql: PostgreSQLSession? {
        if case .postgresql(let session) = backend { return session }
        return nil
    }

    /// How many times this connection compiled SQL into a statement; a statement-cache hit
    /// does not count. For tests and diagnostics.
    package var preparedStatementCount: Int {
        switch backend {
        case .sqlite(let connection): connection.preparedStatementCount
        case .postgresql(let session): session.preparedStatementCount
        }
    }

    /// How many prepared statements the cache holds now. For tests and diagnostics.
    package var cachedStatementCount: Int {
        switch backend {
        case .sqlite(let connection): connection.cachedStatementCount
        case .postgresql(let session): session.cachedStatementCount
        }
    }

    /// The rowid of the most recent successful `INSERT` on this connection: SQLite only (on
    /// PostgreSQL, and in SQL meant for both, use `INSERT … RETURNING id`).
    package var lastInsertRowID: Int64 {
        guard case .sqlite(let connection) = backend else { preconditionFailure("lastInsertRowID is SQLite's; use INSERT … RETURNING") }
        return connection.lastInsertRowID
    }

    /// Whether a transaction is open.
    package var isInTransaction: Bool {
        switch backend {
        case .sqlite(let connection): connection.isInTransaction
        case .postgresql(let session): session.isInTransaction
        }
    }

    /// Runs one statement with `bindings` for its `?` parameters, discarding any result rows.
    ///
    /// - Returns: The number of rows the statement inserted, updated or deleted; 0 for a
    ///   statement that does not write.
    /// - Throws: `StorageError`, for example with `isConstraintViolation`.
    @discardableResult
    package func execute(_ sql: String, _ bindings: [(any DatabaseValueConvertible)?] = []) throws -> Int {
        switch backend {
        case .sqlite(let connection): try connection.execute(sql, bindings)
        case .postgresql(let session): try session.run(sql, bindings).changed
        }
    }

    /// Runs one query with `bindings` for its `?` parameters and returns all its rows.
    package func query(_ sql: String, _ bindings: [(any DatabaseValueConvertible)?] = []) throws -> [Row] {
        switch backend {
        case .sqlite(let connection): try connection.query(sql, bindings)
        case .postgresql(let session): try session.run(sql, bindings).rows
        }
    }

    /// Runs one query and returns its first row, or nil when it has none. On SQLite later rows
    /// are not computed; on PostgreSQL they are sent, so write `LIMIT 1` where many could match.
    package func queryOne(_ sql: String, _ bindings: [(any DatabaseValueConvertible)?] = []) throws -> Row? {
        switch backend {
        case .sqlite(let connection): try connection.queryOne(sql, bindings)
        case .postgresql(let session): try session.run(sql, bindings).rows.first
        }
    }

    /// Runs one query and decodes the first column of its first row as `T`, or returns nil
    /// when it has no row: `try connection.queryValue("SELECT count(*) FROM users", as: Int.self)`.
    package func queryValue<T: DatabaseValueConvertible>(
        _ sql: String, _ bindings: [(any DatabaseValueConvertible)?] = [], as type: T.Type = T.self
    ) throws -> T? {
        try queryOne(sql, bindings)?.value(at: 0, as: type)
    }

    /// Runs several `;`-separated statements without bindings or caching, as migrations do.
    package func executeScript(_ sql: String) throws {
        switch backend {
        case .sqlite(let connection): try connection.executeScript(sql)
        case .postgresql(let session): try session.script(sql)
        }
    }

    /// Runs `body` inside a savepoint nested in the current transaction: when `body` throws,
    /// only its changes are rolled back, and the error is rethrown.
    ///
    /// Use it to attempt a statement that may violate a constraint without losing the rest of
    /// the transaction (on PostgreSQL, a failed statement otherwise aborts the whole
    /// transaction).
    @discardableResult
    package func savepoint<T>(_ body: (Connection) throws -> T) throws -> T {
        try executeScript("SAVEPOINT storage_savepoint")
        do {
            let result = try body(self)
            try executeScript("RELEASE SAVEPOINT storage_savepoint")
            return result
        } catch {
            _ = try? executeScript("ROLLBACK TO SAVEPOINT storage_savepoint")
            _ = try? executeScript("RELEASE SAVEPOINT storage_savepoint")
            throw error
        }
    }

    /// Runs `body` between `begin` (a `BEGIN …` statement) and `COMMIT`, rolling back when
    /// `body` or the commit throws; records its duration as a `kind` transaction, and the
    /// commit of a write.
    func transaction<T>(
        _ kind: StorageMetrics.TransactionKind, beginningWith begin: String, _ body: (Connection) throws -> T
    ) throws -> T {
        let started = metrics == nil ? nil : ContinuousClock.now
        defer {
            if let metrics, let started { metrics.transactionDurations(kind).observe(since: started) }
        }
        if case .postgresql(let session) = backend { try session.begin(begin) } else { try control(begin) }
        do {
            let result = try body(self)
            // PostgreSQL answers the COMMIT of a transaction a failed statement aborted with a
            // rollback and no error: a body that caught that statement's error and went on
            // must not be told its writes were committed.
            if let session = postgresql, session.isInFailedTransaction {
                throw StorageError.generic("a statement of the transaction failed; none of its writes were committed")
            }
            try control("COMMIT")
            if kind == .write { metrics?.countCommit() }
            return result
        } catch {
            // Some errors (SQLITE_FULL, SQLITE_IOERR, …) already ended the transaction.
            if isInTransaction { _ = try? executeScript("ROLLBACK") }
            throw error
        }
    }

    /// Runs a transaction-control statement: a cached statement on SQLite, a simple query on
    /// PostgreSQL (one round trip either way, and no prepared statement kept for it).
    private func control(_ sql: String) throws {
        switch backend {
        case .sqlite(let connection): try connection.execute(sql)
        case .postgresql(let session): try session.script(sql)
        }
    }

    /// Makes the connection's statements stop once they used up the running thread's
    /// `ReadBudget` (SQLite; a short-read connection of an event loop).
    func stopsAtThreadBudget() {
        if case .sqlite(let connection) = backend { connection.stopsAtThreadBudget() }
    }

    /// Counts the connection busy while its worker runs a job (PostgreSQL, with metrics).
    func willRunJob() {
        count(as: .busy)
    }

    /// Counts the connection idle again after a job, or broken when the job found the server
    /// gone (PostgreSQL, with metrics).
    func didRunJob() {
        guard let session = postgresql else { return }
        count(as: session.isClosed ? .broken : .idle)
    }

    /// Moves the connection to `state` in `storage_postgresql_connections`, where it is
    /// counted (on PostgreSQL with metrics only).
    private func count(as state: StorageMetrics.ConnectionState?) {
        guard let metrics, case .postgresql = backend, state != countedState else { return }
        metrics.moveConnection(from: countedState, to: state)
        countedState = state
    }

    /// Finalizes every cached statement and closes the connection.
    func close() {
        count(as: nil)
        switch backend {
        case .sqlite(let connection): connection.close()
        case .postgresql: break  // libpq's connection closes when the session is released
        }
    }
}

@available(*, unavailable, message: "a Connection is confined to its worker thread")
extension Connection: Sendable {}

/// The SQL dialect of a database.
package enum SQLDialect: String, Sendable, Hashable {
    /// SQLite 3 (the embedded default).
    case sqlite
    /// PostgreSQL (15 and later).
    case postgresql
}
