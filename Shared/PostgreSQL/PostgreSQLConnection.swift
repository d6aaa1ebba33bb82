internal import CLibPQ
internal import Foundation

/// One connection to a PostgreSQL server through libpq, blocking: each call waits for the
/// server's answer. Made for the database threads of a pool (the event loops never call it).
///
/// Parameters travel apart from the SQL (`$1`, `$2` … with `PQexecParams`), in text format:
/// no value is ever spliced into a statement. Values come back as text, nil for NULL.
///
/// Not thread-safe: one thread at a time, as libpq's `PGconn`.
public final class PostgreSQLConnection {
    private let connection: OpaquePointer

    /// Connects to `url` (`postgres://user@host:port/database?…`, or libpq's `key=value`
    /// form); a password comes from the URL, `PGPASSWORD` or `~/.pgpass`, as libpq reads them.
    ///
    /// - Throws: ``PostgreSQLError`` naming why (refused, unknown database, bad password …),
    ///   without the password.
    public init(url: String) throws(PostgreSQLError) {
        guard let connection = PQconnectdb(url) else {
            throw PostgreSQLError(message: "libpq could not allocate a connection.")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.text(PQerrorMessage(connection)) ?? "The connection failed."
            PQfinish(connection)
            throw PostgreSQLError(message: message)
        }
        self.connection = connection
    }

    deinit {
        PQfinish(connection)
    }

    /// Whether the connection is still usable (false once the server closed it).
    public var isOpen: Bool { PQstatus(connection) == CONNECTION_OK }

    /// Runs `sql` with `parameters` bound to `$1`, `$2` … (nil binds NULL) and returns what it
    /// answered.
    ///
    /// - Throws: ``PostgreSQLError`` with the server's SQLSTATE, message and detail.
    @discardableResult
    public func execute(_ sql: String, _ parameters: [String?] = []) throws(PostgreSQLError) -> PostgreSQLRows {
        let result = Self.withCStrings(parameters) { values in
            PQexecParams(connection, sql, Int32(parameters.count), nil, values, nil, nil, 0)
        }
        guard let result else {
            throw PostgreSQLError(message: Self.text(PQerrorMessage(connection)) ?? "The statement was not sent.")
        }
        defer { PQclear(result) }
        switch PQresultStatus(result) {
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
            return Self.rows(of: result)
        default:
            throw Self.error(of: result, connection: connection)
        }
    }

    /// Runs `body` in a transaction at `isolation`: committed when it returns, rolled back
    /// when it throws (its error rethrown).
    @discardableResult
    public func transaction<Value>(
        isolation: IsolationLevel = .readCommitted, _ body: (PostgreSQLConnection) throws -> Value
    ) throws -> Value {
        try execute("BEGIN ISOLATION LEVEL \(isolation.sql)")
        let value: Value
        do {
            value = try body(self)
        } catch {
            _ = try? execute("ROLLBACK")
            throw error
        }
        try execute("COMMIT")
        return value
    }

    /// The isolation levels a transaction may ask for.
    public enum IsolationLevel: Sendable {
        /// Each statement sees what was committed before it began (PostgreSQL's default).
        case readCommitted
        /// The whole transaction sees one snapshot.
        case repeatableRead
        /// As if the transactions ran one at a time; a conflict fails with SQLSTATE 40001.
        case serializable

        /// The level as SQL names it.
        var sql: String {
            switch self {
            case .readCommitted: "READ COMMITTED"
            case .repeatableRead: "REPEATABLE READ"
            case .serializable: "SERIALIZABLE"
            }
        }
    }

    // MARK: Results

    /// The columns, rows and changed-row count of a successful `result`.
    private static func rows(of result: OpaquePointer) -> PostgreSQLRows {
        let columnCount = PQnfields(result)
        let rowCount = PQntuples(result)
        let columns = (0..<columnCount).map { text(PQfname(result, $0)) ?? "" }
        let rows = (0..<rowCount).map { row in
            (0..<columnCount).map { column -> String? in
                PQgetisnull(result, row, column) == 1 ? nil : text(PQgetvalue(result, row, column))
            }
        }
        return PostgreSQLRows(columns: columns, rows: rows, affected: Int(text(PQcmdTuples(result)) ?? "") ?? 0)
    }

    /// The error a failed `result` reports.
    private static func error(of result: OpaquePointer, connection: OpaquePointer) -> PostgreSQLError {
        let field = { (code: Character) in text(PQresultErrorField(result, Int32(code.asciiValue!))) }
        let message = field("M") ?? text(PQresultErrorMessage(result)) ?? text(PQerrorMessage(connection)) ?? "The statement failed."
        return PostgreSQLError(sqlState: field("C"), message: message.trimmingCharacters(in: .whitespacesAndNewlines), detail: field("D"))
    }

    /// A C string as Swift text, trimmed of libpq's trailing newline; nil for NULL or empty.
    private static func text(_ pointer: UnsafePointer<CChar>?) -> String? {
        guard let pointer else { return nil }
        let text = String(cString: pointer).trimmingCharacters(in: .newlines)
        return text.isEmpty ? nil : text
    }

    /// Calls `body` with `values` as NUL-terminated C strings (NULL for nil), valid during it.
    private static func withCStrings<Result>(
        _ values: [String?], _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> Result
    ) -> Result {
        let copies = values.map { $0.map { strdup($0) } ?? nil }
        defer { copies.forEach { free($0) } }
        let pointers = copies.map { $0.map { UnsafePointer($0) } }
        return pointers.withUnsafeBufferPointer { body($0.baseAddress) }
    }
}
