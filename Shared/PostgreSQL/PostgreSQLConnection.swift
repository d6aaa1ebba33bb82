internal import CLibPQ
internal import Foundation
#if canImport(Glibc)
private import Glibc
#endif

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
    /// form); a password comes from `password` when given, else from the URL, `PGPASSWORD` or
    /// `~/.pgpass`, as libpq reads them; `applicationName` names the session in the server's
    /// `pg_stat_activity` (over the URL's `application_name`). The server's notices (`NOTICE: … already exists,
    /// skipping`) are dropped rather than printed on standard error.
    ///
    /// - Throws: ``PostgreSQLError`` naming why (refused, unknown database, bad password …),
    ///   without the password.
    public init(url: String, password: String? = nil, applicationName: String? = nil) throws(PostgreSQLError) {
        // Defaults before the URL (which may override them): give up on a server that does not
        // answer — a vanished host, a partition — in seconds, not when TCP's own keepalive
        // would (hours), so the database threads never hang on one.
        var keywords = [
            "connect_timeout", "keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count",
            "tcp_user_timeout", "dbname", "fallback_application_name",
        ]
        var values = ["10", "1", "30", "10", "3", "30000", url, "storefront"]
        if let applicationName {
            keywords.append("application_name")
            values.append(applicationName)
        }
        if let password {
            keywords.append("password")
            values.append(password)
        }
        // expand_dbname = 1: the dbname value is itself a URL or a key=value string.
        let made = Self.withCStrings(keywords + [nil]) { keywordPointers in
            Self.withCStrings(values + [nil]) { valuePointers in
                PQconnectdbParams(keywordPointers, valuePointers, 1)
            }
        }
        guard let connection = made else {
            throw PostgreSQLError(message: "libpq could not allocate a connection.")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.text(PQerrorMessage(connection)) ?? "The connection failed."
            PQfinish(connection)
            throw PostgreSQLError(message: message)
        }
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
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
        return try rows(of: result)
    }

    /// Compiles `sql` into the prepared statement `name` on this connection, the parameters'
    /// types inferred by the server from where they stand.
    ///
    /// - Throws: ``PostgreSQLError`` when the statement does not compile (or the name is taken).
    public func prepare(_ name: String, _ sql: String) throws(PostgreSQLError) {
        try rows(of: PQprepare(connection, name, sql, 0, nil))
    }

    /// Runs the prepared statement `name` with `parameters` (text form; nil binds NULL).
    ///
    /// - Throws: ``PostgreSQLError`` with the server's SQLSTATE, message and detail.
    @discardableResult
    public func executePrepared(_ name: String, _ parameters: [String?]) throws(PostgreSQLError) -> PostgreSQLRows {
        let result = Self.withCStrings(parameters) { values in
            PQexecPrepared(connection, name, Int32(parameters.count), values, nil, nil, 0)
        }
        return try rows(of: result)
    }

    /// Runs `sql`, which may hold several `;`-separated statements and no parameters (a
    /// migration's script), and returns the last statement's answer.
    @discardableResult
    public func executeScript(_ sql: String) throws(PostgreSQLError) -> PostgreSQLRows {
        try rows(of: PQexec(connection, sql))
    }

    /// Closes the connection and opens it again with the same parameters (after the server
    /// restarted or the network dropped it); prepared statements are gone afterwards.
    ///
    /// - Throws: ``PostgreSQLError`` when the new connection fails.
    public func reconnect() throws(PostgreSQLError) {
        PQreset(connection)
        guard PQstatus(connection) == CONNECTION_OK else {
            throw PostgreSQLError(message: Self.text(PQerrorMessage(connection)) ?? "The connection failed.")
        }
    }

    /// Whether the session is inside a transaction block (open, or failed and awaiting its
    /// ROLLBACK).
    public var isInTransaction: Bool {
        let status = PQtransactionStatus(connection)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
    }

    /// Whether the session is in a transaction a failed statement aborted: its COMMIT would
    /// roll it back (and answer without an error).
    public var isInFailedTransaction: Bool { PQtransactionStatus(connection) == PQTRANS_INERROR }

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

    // MARK: Notifications

    /// The process id of the server process serving this connection (what
    /// `pg_stat_activity.pid` and ``PostgreSQLNotification/processID`` name).
    public var backendProcessID: Int32 { PQbackendPID(connection) }

    /// Subscribes this connection to `channel` (`LISTEN`): from now on every `NOTIFY` on it
    /// committed by any session of the database reaches ``waitForNotifications(timeout:)``.
    ///
    /// - Throws: ``PostgreSQLError`` when the server refuses (or the connection is lost).
    public func listen(_ channel: String) throws(PostgreSQLError) {
        try executeScript("LISTEN \"" + channel.replacing("\"", with: "\"\"") + "\"")
    }

    /// The notifications of the channels this connection listens to, waiting up to `timeout`
    /// for the first when none has arrived yet; empty when none came in time. Returns as soon
    /// as the server sends some, with all that arrived together.
    ///
    /// Call it between statements only (the connection idle, no transaction open): a
    /// notification is read from the socket here, as libpq's `PQconsumeInput` and
    /// `PQnotifies` read it.
    ///
    /// - Throws: ``PostgreSQLError`` when the connection is lost (the server closed it, was
    ///   restarted, or the network dropped it): ``isOpen`` is false after that, and a new
    ///   connection must listen again — what was notified meanwhile is not delivered.
    public func waitForNotifications(timeout: Duration) throws(PostgreSQLError) -> [PostgreSQLNotification] {
        let arrived = receivedNotifications()
        guard arrived.isEmpty else { return arrived }
        let socket = PQsocket(connection)
        guard socket >= 0, isOpen else { throw PostgreSQLError(message: "The connection is closed.") }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let milliseconds = timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
        let ready = poll(&descriptor, 1, Int32(clamping: max(0, milliseconds)))
        guard ready > 0 else {
            if ready < 0 && errno != EINTR { throw PostgreSQLError(message: "poll failed: \(String(cString: strerror(errno)))") }
            return []  // timed out, or a signal interrupted the wait
        }
        guard PQconsumeInput(connection) == 1, isOpen else {
            throw PostgreSQLError(message: Self.text(PQerrorMessage(connection)) ?? "The connection was lost.")
        }
        return receivedNotifications()
    }

    /// The notifications libpq has already read from the socket, oldest first.
    private func receivedNotifications() -> [PostgreSQLNotification] {
        var notifications: [PostgreSQLNotification] = []
        while let notice = PQnotifies(connection) {
            defer { PQfreemem(notice) }
            notifications.append(
                PostgreSQLNotification(
                    channel: String(cString: notice.pointee.relname), payload: String(cString: notice.pointee.extra),
                    processID: notice.pointee.be_pid))
        }
        return notifications
    }

    // MARK: Results

    /// What `result` (of the last call on the connection) answered; it is cleared here.
    ///
    /// - Throws: ``PostgreSQLError`` when there is no result (the statement was not sent) or it
    ///   reports a failure.
    @discardableResult
    private func rows(of result: OpaquePointer?) throws(PostgreSQLError) -> PostgreSQLRows {
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

    /// The columns, their types, the rows and changed-row count of a successful `result`.
    private static func rows(of result: OpaquePointer) -> PostgreSQLRows {
        let columnCount = PQnfields(result)
        let rowCount = PQntuples(result)
        let columns = (0..<columnCount).map { text(PQfname(result, $0)) ?? "" }
        let types = (0..<columnCount).map { UInt32(PQftype(result, $0)) }
        let rows = (0..<rowCount).map { row in
            (0..<columnCount).map { column -> String? in
                guard PQgetisnull(result, row, column) == 0 else { return nil }
                // Values are NUL-terminated in text format; an empty one is "" and not NULL.
                return String(cString: PQgetvalue(result, row, column))
            }
        }
        return PostgreSQLRows(
            columns: columns, types: types, rows: rows, affected: Int(text(PQcmdTuples(result)) ?? "") ?? 0)
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
    private static func withCStrings<Result, Failure: Error>(
        _ values: [String?], _ body: (UnsafePointer<UnsafePointer<CChar>?>?) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let copies = values.map { $0.map { strdup($0) } ?? nil }
        defer { copies.forEach { free($0) } }
        // C interop, not a speed choice (no benchmark): libpq reads arrays of C strings.
        let pointers = copies.map { $0.map { UnsafePointer($0) } }
        var result: Result?
        var failure: Failure?
        pointers.withUnsafeBufferPointer { buffer in
            do throws(Failure) { result = try body(buffer.baseAddress) } catch { failure = error }
        }
        if let failure { throw failure }
        return result!
    }
}
