private import CSQLite

/// One SQLite connection with its cache of prepared statements: the SQLite side of
/// `Connection`.
///
/// Not `Sendable`, on purpose: a connection is created on its worker thread and used only
/// there, one job at a time, which is what makes it safe to open SQLite in multi-thread mode
/// (`SQLITE_OPEN_NOMUTEX`).
final class SQLiteConnection {
    /// The `sqlite3 *`, valid until `close()`.
    private let handle: OpaquePointer
    /// Whether `close()` has not run yet.
    private var isOpen = true
    /// Prepared statements by SQL text, at most `statementCacheCapacity` of them.
    private var statements: [String: Statement] = [:]
    /// How many statements the cache keeps; 0 disables caching.
    private let statementCacheCapacity: Int
    /// Counts statement uses, to find the least recently used one to evict.
    private var clock: UInt64 = 0
    /// Where statement durations are recorded; nil records nothing.
    private let metrics: StorageMetrics?

    /// How many times this connection compiled SQL into a statement; a statement-cache hit
    /// does not count. For tests and diagnostics.
    private(set) var preparedStatementCount = 0

    /// Wraps an open `sqlite3 *`, which the connection then owns, timing its statements into
    /// `metrics`.
    init(handle: OpaquePointer, statementCacheCapacity: Int, metrics: StorageMetrics? = nil) {
        self.handle = handle
        self.statementCacheCapacity = max(0, statementCacheCapacity)
        self.metrics = metrics
    }

    deinit {
        close()
    }

    /// How many prepared statements the cache holds now. For tests and diagnostics.
    var cachedStatementCount: Int { statements.count }

    /// The rowid of the most recent successful `INSERT` on this connection.
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Whether a transaction is open (SQLite is not in autocommit mode).
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Runs one statement with `bindings` for its `?` parameters, discarding any result rows.
    ///
    /// - Returns: The number of rows the statement inserted, updated or deleted; 0 for a
    ///   statement that does not write.
    /// - Throws: `StorageError`, for example with `isConstraintViolation`.
    @discardableResult
    func execute(_ sql: String, _ bindings: [(any DatabaseValueConvertible)?] = []) throws -> Int {
        try withStatement(sql) { statement in
            try statement.bind(bindings)
            while try statement.step() {}
            return statement.isReadOnly ? 0 : Int(sqlite3_changes64(handle))
        }
    }

    /// Runs one query with `bindings` for its `?` parameters and returns all its rows.
    func query(_ sql: String, _ bindings: [(any DatabaseValueConvertible)?] = []) throws -> [Row] {
        try withStatement(sql) { statement in
            try statement.bind(bindings)
            let columns = statement.columnNames()
            var rows: [Row] = []
            while try statement.step() {
                rows.append(statement.row(columns: columns))
            }
            return rows
        }
    }

    /// Runs one query and returns its first row, or nil when it has none; later rows are not
    /// computed.
    func queryOne(_ sql: String, _ bindings: [(any DatabaseValueConvertible)?] = []) throws -> Row? {
        try withStatement(sql) { statement in
            try statement.bind(bindings)
            guard try statement.step() else { return nil }
            return statement.row(columns: statement.columnNames())
        }
    }

    /// Runs one query and decodes the first column of its first row as `T`, or returns nil
    /// when it has no row: `try connection.queryValue("SELECT count(*) FROM users", as: Int.self)`.
    func queryValue<T: DatabaseValueConvertible>(
        _ sql: String, _ bindings: [(any DatabaseValueConvertible)?] = [], as type: T.Type = T.self
    ) throws -> T? {
        try queryOne(sql, bindings)?.value(at: 0, as: type)
    }

    /// Runs several `;`-separated statements without bindings or caching, as migrations do.
    func executeScript(_ sql: String) throws {
        precondition(isOpen, "a connection is used after it was closed")
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw StorageError(code: code, handle: handle, sql: sql) }
    }

    /// Makes this connection's statements stop with `SQLITE_INTERRUPT` once they used up the
    /// instruction budget the running thread set (`ReadBudget`); SQLite reports every
    /// `ReadBudget.instructionsPerStep` virtual-machine instructions. For connections that run
    /// on event loops.
    func stopsAtThreadBudget() {
        sqlite3_progress_handler(handle, Int32(ReadBudget.instructionsPerStep), { _ in ReadBudget.takeStep() ? 0 : 1 }, nil)
    }

    /// Finalizes every cached statement and closes the connection; later calls do nothing.
    func close() {
        guard isOpen else { return }
        isOpen = false
        for statement in statements.values {
            statement.finalize()
        }
        statements.removeAll()
        // With every statement finalized this cannot return SQLITE_BUSY; the _v2 variant
        // would defer the close instead of failing if one were left.
        sqlite3_close_v2(handle)
    }

    /// Runs `body` with the cached statement for `sql` (compiling it on a miss) and resets the
    /// statement afterwards, so it holds no lock or snapshot between uses; records the
    /// duration of the whole in the statement's histogram.
    private func withStatement<T>(_ sql: String, _ body: (Statement) throws -> T) throws -> T {
        precondition(isOpen, "a connection is used after it was closed")
        let started = metrics == nil ? nil : ContinuousClock.now
        let statement = try cachedStatement(for: sql)
        defer {
            statement.reset()
            if let started, let durations = statement.durations { durations.observe(since: started) }
        }
        return try body(statement)
    }

    private func cachedStatement(for sql: String) throws -> Statement {
        clock += 1
        if let statement = statements[sql] {
            statement.lastUse = clock
            return statement
        }
        let statement = try Statement(
            database: handle, sql: sql, persistent: statementCacheCapacity > 0, durations: metrics?.queryDurations(sql:))
        preparedStatementCount += 1
        statement.lastUse = clock
        guard statementCacheCapacity > 0 else { return statement }
        if statements.count >= statementCacheCapacity,
            let oldest = statements.values.min(by: { $0.lastUse < $1.lastUse })
        {
            statements[oldest.sql] = nil
            oldest.finalize()
        }
        statements[sql] = statement
        return statement
    }
}

@available(*, unavailable, message: "a connection is confined to its worker thread")
extension SQLiteConnection: Sendable {}
