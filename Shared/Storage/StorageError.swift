private import CSQLite

/// The one error the storage layer throws: an SQLite result code with its message.
///
/// Errors that do not come from SQLite itself (a closed database, a value of the wrong type in
/// a column, a missing directory) are reported with the SQLite result code that describes them
/// best (`SQLITE_MISUSE`, `SQLITE_MISMATCH`, `SQLITE_CANTOPEN`, …), so callers only ever switch
/// on one kind of code. Use the `is…` properties rather than comparing raw codes.
package struct StorageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The primary SQLite result code, for example 19 (`SQLITE_CONSTRAINT`).
    package var resultCode: Int32
    /// The extended SQLite result code, for example 2067 (`SQLITE_CONSTRAINT_UNIQUE`); equal to
    /// `resultCode` when SQLite gave no extended code.
    package var extendedResultCode: Int32
    /// What went wrong, in SQLite's words or ours.
    package var message: String
    /// The SQL being run when the error happened, if any.
    package var sql: String?
    /// PostgreSQL's SQLSTATE (`23505`, `40001` …) when the error came from PostgreSQL; the
    /// result codes then hold its SQLite counterpart.
    package var sqlState: String?

    /// Creates an error from its parts; the primary code is the low byte of the extended code.
    package init(extendedResultCode: Int32, message: String, sql: String? = nil) {
        self.resultCode = extendedResultCode & 0xFF
        self.extendedResultCode = extendedResultCode
        self.message = message
        self.sql = sql
    }

    /// Creates an error from the state of a connection after a call returned `code`.
    ///
    /// - Parameters:
    ///   - code: The (possibly extended) result code the failing call returned.
    ///   - handle: The `sqlite3 *` the call ran on, whose error message is current; may be nil.
    ///   - sql: The statement being run, if any.
    init(code: Int32, handle: OpaquePointer?, sql: String? = nil) {
        var extended = code
        var text: String?
        if let handle {
            // The connection's extended code is more precise when it matches the call's code.
            let current = sqlite3_extended_errcode(handle)
            if current & 0xFF == code & 0xFF { extended = current }
            if let pointer = sqlite3_errmsg(handle) { text = String(cString: pointer) }
        }
        if text == nil, let pointer = sqlite3_errstr(code) { text = String(cString: pointer) }
        self.init(extendedResultCode: extended, message: text ?? "SQLite error \(code)", sql: sql)
    }

    /// A description for logs: the extended code, the message and the SQL.
    package var description: String {
        var text = sqlState.map { "StorageError(\(extendedResultCode), SQLSTATE \($0)): \(message)" }
            ?? "StorageError(\(extendedResultCode)): \(message)"
        if let sql { text += " [SQL: \(sql)]" }
        return text
    }

    /// Whether a constraint (UNIQUE, PRIMARY KEY, FOREIGN KEY, NOT NULL, CHECK) was violated.
    package var isConstraintViolation: Bool { resultCode == SQLITE_CONSTRAINT }

    /// Whether a UNIQUE or PRIMARY KEY constraint was violated: the row already exists.
    package var isUniqueViolation: Bool {
        extendedResultCode == constraintUnique || extendedResultCode == constraintPrimaryKey
    }

    /// Whether a FOREIGN KEY constraint was violated.
    package var isForeignKeyViolation: Bool { extendedResultCode == constraintForeignKey }

    /// Whether the database was busy or locked beyond the busy timeout (SQLite), or a
    /// transaction lost a serialization conflict or a deadlock more often than it is retried
    /// (PostgreSQL); retrying later may succeed.
    package var isBusy: Bool { resultCode == SQLITE_BUSY || resultCode == SQLITE_LOCKED }

    /// Whether PostgreSQL aborted the transaction for a serialization conflict (40001) or a
    /// deadlock (40P01): running it again from its start may succeed.
    package var isSerializationFailure: Bool { sqlState == "40001" || sqlState == "40P01" }

    /// Whether the database could not be read or written, or (PostgreSQL) the connection to
    /// the server was lost.
    package var isIOError: Bool { resultCode == SQLITE_IOERR }

    /// Whether the database file could not be opened (missing directory, permissions).
    package var isCannotOpen: Bool { resultCode == SQLITE_CANTOPEN }

    /// Whether a column held a value that cannot be decoded as the requested type.
    package var isTypeMismatch: Bool { resultCode == SQLITE_MISMATCH }

    /// Whether the database was written through a read-only connection or transaction.
    package var isReadOnly: Bool { resultCode == SQLITE_READONLY }

    /// Whether the storage layer was used wrongly, for example after `Database.close()`.
    package var isMisuse: Bool { resultCode == SQLITE_MISUSE }
}

// The extended codes are macros the importer cannot bring over; their values are fixed by
// https://www.sqlite.org/rescode.html (primary code | detail << 8).
private let constraintForeignKey = SQLITE_CONSTRAINT | (3 << 8)
private let constraintPrimaryKey = SQLITE_CONSTRAINT | (6 << 8)
private let constraintUnique = SQLITE_CONSTRAINT | (8 << 8)

// The codes PostgreSQL's errors are given (see `StorageError.init(_:sql:)`), for files that
// do not import SQLite.
let storageConstraint = SQLITE_CONSTRAINT
let storageConstraintUnique = constraintUnique
let storageConstraintForeignKey = constraintForeignKey
let storageBusy = SQLITE_BUSY
let storageReadOnly = SQLITE_READONLY
let storageMismatch = SQLITE_MISMATCH
let storageIOError = SQLITE_IOERR
let storageGenericError = SQLITE_ERROR

extension StorageError {
    /// The error for work submitted to a database that has been closed.
    static let closed = StorageError(extendedResultCode: SQLITE_MISUSE, message: "the database is closed")

    /// An error with the `SQLITE_MISUSE` code and the given message.
    static func misuse(_ message: String, sql: String? = nil) -> StorageError {
        StorageError(extendedResultCode: SQLITE_MISUSE, message: message, sql: sql)
    }

    /// An error with the `SQLITE_MISMATCH` code and the given message.
    static func mismatch(_ message: String, sql: String? = nil) -> StorageError {
        StorageError(extendedResultCode: SQLITE_MISMATCH, message: message, sql: sql)
    }

    /// An error with the `SQLITE_IOERR` code and the given message.
    static func ioError(_ message: String) -> StorageError {
        StorageError(extendedResultCode: SQLITE_IOERR, message: message)
    }

    /// An error with the `SQLITE_CANTOPEN` code and the given message.
    static func cannotOpen(_ message: String) -> StorageError {
        StorageError(extendedResultCode: SQLITE_CANTOPEN, message: message)
    }

    /// An error with the generic `SQLITE_ERROR` code and the given message.
    static func generic(_ message: String, sql: String? = nil) -> StorageError {
        StorageError(extendedResultCode: SQLITE_ERROR, message: message, sql: sql)
    }

    /// The same error with `context` put in front of its message.
    func adding(context: String) -> StorageError {
        var copy = self
        copy.message = "\(context): \(message)"
        return copy
    }
}
