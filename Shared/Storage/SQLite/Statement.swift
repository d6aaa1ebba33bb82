private import CSQLite
import Telemetry

/// A prepared statement, owned by the `Connection` that compiled it and confined to that
/// connection's thread (not `Sendable`).
///
/// A use is: `bind`, then `step` until it returns false, then `reset` — always `reset`, so that
/// a cached statement never keeps a read snapshot or a lock open between uses.
final class Statement {
    /// The SQL text it was compiled from; the statement cache's key.
    let sql: String
    /// The `sqlite3_stmt *`; nil once finalized.
    private var handle: OpaquePointer?
    /// A tick of the owning cache's clock at the last use, for least-recently-used eviction.
    var lastUse: UInt64 = 0
    /// The histogram its uses are timed into (`storage_query_duration_seconds` of its label);
    /// nil when they are not timed.
    let durations: Histogram?
    /// The result columns' names, once read (`columnNames()`).
    private var columns: ColumnNames?
    /// How often SQLite had recompiled the statement when `columns` was read.
    private var columnsReprepared: Int32 = 0

    /// Compiles `sql` on the connection `database` (an `sqlite3 *`).
    ///
    /// - Parameters:
    ///   - persistent: Tells SQLite the statement will be reused many times.
    ///   - durations: Finds the histogram for the statement's uses, once it compiled.
    /// - Throws: `StorageError` when the SQL does not compile, is empty, or holds more than one
    ///   statement (use `Connection.executeScript(_:)` for several).
    init(database: OpaquePointer, sql: String, persistent: Bool, durations: ((String) -> Histogram?)? = nil) throws {
        self.sql = sql
        var statement: OpaquePointer?
        var tail: UnsafePointer<CChar>?
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        let code = sql.withCString { text in
            let code = sqlite3_prepare_v3(database, text, -1, flags, &statement, &tail)
            // A second statement after the first would silently not run; comments may follow.
            guard code == SQLITE_OK, let tail, tail.pointee != 0 else { return code }
            var next: OpaquePointer?
            let nextCode = sqlite3_prepare_v3(database, tail, -1, 0, &next, nil)
            defer { sqlite3_finalize(next) }
            return nextCode == SQLITE_OK && next == nil ? code : SQLITE_MISUSE
        }
        guard code == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            if code == SQLITE_MISUSE {
                throw StorageError.misuse("one statement at a time; use executeScript for several", sql: sql)
            }
            if code == SQLITE_OK { throw StorageError.misuse("the SQL holds no statement", sql: sql) }
            throw StorageError(code: code, handle: database, sql: sql)
        }
        self.handle = statement
        self.durations = durations?(sql)
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Whether the statement leaves the database unchanged (a `SELECT`, most `PRAGMA`s).
    var isReadOnly: Bool { sqlite3_stmt_readonly(handle) != 0 }

    /// Binds `values` to the positional parameters `?1`, `?2`, …; their count must match.
    func bind(_ values: [(any DatabaseValueConvertible)?]) throws {
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard values.count == expected else {
            throw StorageError.misuse("the statement takes \(expected) bindings, not \(values.count)", sql: sql)
        }
        for (offset, value) in values.enumerated() {
            let code = bind(value?.databaseValue ?? .null, at: Int32(offset + 1))
            guard code == SQLITE_OK else { throw error(code) }
        }
    }

    private func bind(_ value: DatabaseValue, at index: Int32) -> Int32 {
        switch value {
        case .null:
            return sqlite3_bind_null(handle, index)
        case .integer(let integer):
            return sqlite3_bind_int64(handle, index, integer)
        case .real(let real):
            return sqlite3_bind_double(handle, index, real)
        case .text(var text):
            return text.withUTF8 { bytes in
                // An empty buffer may have no address, and a null pointer would bind NULL.
                guard let base = bytes.baseAddress else { return sqlite3_bind_text(handle, index, "", 0, transient) }
                return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) { characters in
                    sqlite3_bind_text64(handle, index, characters, UInt64(bytes.count), transient, UInt8(SQLITE_UTF8))
                }
            }
        case .blob(let bytes):
            return bytes.withUnsafeBytes { raw in
                guard let base = raw.baseAddress, !raw.isEmpty else { return sqlite3_bind_zeroblob(handle, index, 0) }
                return sqlite3_bind_blob64(handle, index, base, UInt64(raw.count), transient)
            }
        }
    }

    /// Runs the statement to its next row: true when a row is ready for `row(columns:)`, false
    /// when it is done.
    func step() throws -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let code: throw error(code)
        }
    }

    /// The names of the result columns: read once, and again only after SQLite recompiled the
    /// statement (a schema change can change them), so a cached statement's rows share one
    /// table of names.
    func columnNames() -> ColumnNames {
        let reprepared = sqlite3_stmt_status(handle, SQLITE_STMTSTATUS_REPREPARE, 0)
        if let columns, columnsReprepared == reprepared { return columns }
        let count = sqlite3_column_count(handle)
        let names = ColumnNames((0..<count).map { index in
            sqlite3_column_name(handle, index).map { String(cString: $0) } ?? "column\(index)"
        })
        columns = names
        columnsReprepared = reprepared
        return names
    }

    /// The current row, after `step()` returned true.
    func row(columns: ColumnNames) -> Row {
        let values = (0..<Int32(columns.names.count)).map(value(at:))
        return Row(values: values, columns: columns)
    }

    private func value(at index: Int32) -> DatabaseValue {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER:
            return .integer(sqlite3_column_int64(handle, index))
        case SQLITE_FLOAT:
            return .real(sqlite3_column_double(handle, index))
        case SQLITE_TEXT:
            // Text first, then its length: sqlite.org/c3ref/column_blob.html.
            guard let text = sqlite3_column_text(handle, index) else { return .text("") }
            let count = Int(sqlite3_column_bytes(handle, index))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            guard let blob = sqlite3_column_blob(handle, index) else { return .blob([]) }
            let count = Int(sqlite3_column_bytes(handle, index))
            return .blob([UInt8](UnsafeRawBufferPointer(start: blob, count: count)))
        default:
            return .null
        }
    }

    /// Makes the statement ready for its next use: rewinds it, releasing any read snapshot or
    /// lock it held, and clears its bindings.
    func reset() {
        // The result repeats the last step's error, which was already thrown.
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Releases the compiled statement; the object must not be used afterwards.
    func finalize() {
        sqlite3_finalize(handle)
        handle = nil
    }

    private func error(_ code: Int32) -> StorageError {
        StorageError(code: code, handle: sqlite3_db_handle(handle), sql: sql)
    }
}

/// `SQLITE_TRANSIENT`, which the importer cannot bring over: SQLite copies the bytes before
/// the bind call returns, so Swift's temporary buffers may go away afterwards.
private var transient: sqlite3_destructor_type {
    unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
