internal import PostgreSQL
import Telemetry
#if canImport(Glibc)
private import Glibc
#else
private import Darwin
#endif

/// One PostgreSQL connection with its cache of prepared statements: the PostgreSQL side of
/// `Connection`.
///
/// The stores write their SQL once, with SQLite's positional `?` parameters; a session numbers
/// them (`$1`, `$2` …) before preparing a statement, and keeps each prepared statement by its
/// SQL text, as `SQLiteConnection` does. Values travel in text form, apart from the SQL, and
/// come back typed by their column's type (`bigint` → `.integer`, `bytea` → `.blob` …).
///
/// Every session works in its service's own schema (`SET search_path`), so the stores' SQL
/// names tables without a schema and never reaches another service's.
///
/// Not `Sendable`: confined to its worker thread, one job at a time, as libpq's `PGconn` is.
final class PostgreSQLSession {
    private let connection: PostgreSQLConnection
    /// The schema every statement of this session runs in.
    let schema: String
    /// Prepared statements by SQL text (as the stores wrote it), at most `cacheCapacity`.
    private var statements: [String: Prepared] = [:]
    private let cacheCapacity: Int
    /// Counts statement uses, to find the least recently used one to evict.
    private var clock: UInt64 = 0
    /// Numbers the prepared statements' names; never reused on one connection.
    private var nextName = 0
    /// How many times this session prepared a statement; a cache hit does not count.
    private(set) var preparedStatementCount = 0
    /// `synchronous_commit` for the session's transactions: `on` waits for the WAL flush.
    private let synchronousCommit: Bool
    /// Where statement durations and retries are recorded; nil records nothing.
    private let metrics: StorageMetrics?

    /// A statement prepared on the server under `name`.
    private struct Prepared {
        let name: String
        let parameterCount: Int
        var lastUse: UInt64
        /// The histogram its runs are timed into; nil when they are not timed.
        let durations: Histogram?
    }

    /// Connects to `url` and makes `schema` the session's search path. The schema must exist
    /// (the migrations create it) when statements run, not when connecting. Statements and
    /// retries are recorded in `metrics`.
    ///
    /// - Throws: `StorageError` (`isCannotOpen`) when the server cannot be reached or refuses.
    init(
        url: String, password: String?, schema: String, options: DatabaseOptions, metrics: StorageMetrics? = nil
    ) throws(StorageError) {
        do {
            connection = try PostgreSQLConnection(url: url, password: password, applicationName: options.applicationName)
        } catch {
            throw StorageError.cannotOpen("cannot connect to PostgreSQL: \(error.message)")
        }
        self.schema = schema
        self.cacheCapacity = options.statementCacheCapacity
        self.synchronousCommit = options.synchronous == .full
        self.metrics = metrics
        try configure()
    }

    /// Sets the session's parameters; again after every reconnection.
    private func configure() throws(StorageError) {
        try script(
            // The output forms the values are read back in, whatever the server's or role's
            // defaults: bytea as hex, doubles with every digit.
            "SET search_path TO \(Self.quoted(schema)); SET synchronous_commit TO \(synchronousCommit ? "on" : "off"); SET TIME ZONE 'UTC'; SET bytea_output TO hex; SET extra_float_digits TO 3")
    }

    /// Whether a transaction is open or failed and awaiting its `ROLLBACK`.
    var isInTransaction: Bool { connection.isInTransaction }

    /// Whether a failed statement aborted the open transaction.
    var isInFailedTransaction: Bool { connection.isInFailedTransaction }

    /// How many prepared statements the cache holds now.
    var cachedStatementCount: Int { statements.count }

    /// Opens the connection again when the server or network closed it (a restarted server,
    /// a failover); prepared statements are prepared again as they are used.
    ///
    /// - Throws: `StorageError` (`isIOError`) when the server still cannot be reached.
    func reconnectIfClosed() throws(StorageError) {
        guard !connection.isOpen else { return }
        statements.removeAll()
        do {
            try connection.reconnect()
        } catch {
            throw StorageError.ioError("lost the connection to PostgreSQL and could not reconnect: \(error.message)")
        }
        try configure()
    }

    /// Whether the connection was lost (the last error came from the network, not the server).
    var isClosed: Bool { !connection.isOpen }

    /// Whether the current attempt's `BEGIN` went through: a write whose connection is lost
    /// before it may safely run again, one lost after it may have committed.
    private var begun = false

    /// Runs `attempt` (one whole transaction) and runs it again, from the start, when it
    /// lost a serialization conflict or a deadlock — up to `retries` times, after a short,
    /// growing, random pause — or when the connection was found closed before the
    /// transaction began (a restarted server; reads also when it was lost later).
    ///
    /// The pause blocks this worker thread only; the event loops never wait on it.
    func retrying<T>(writes: Bool, retries: Int, _ attempt: () throws -> T) throws -> T {
        var conflicts = 0
        var reconnected = false
        while true {
            try reconnectIfClosed()
            begun = false
            do {
                return try attempt()
            } catch let error as StorageError where error.isSerializationFailure && conflicts < retries {
                conflicts += 1
                metrics?.countRetry(.serialization)
                let ceiling = UInt32(min(1 << conflicts, 64)) * 1_000
                usleep(UInt32.random(in: ceiling / 4...ceiling))
            } catch let error as StorageError where error.isIOError && isClosed && !reconnected && (!writes || !begun) {
                reconnected = true
                metrics?.countRetry(.reconnection)
            }
        }
    }

    /// Begins a transaction with `sql` (`BEGIN ISOLATION LEVEL …`).
    func begin(_ sql: String) throws(StorageError) {
        try script(sql)
        begun = true
    }

    // MARK: Statements

    /// Runs one statement with `bindings` for its `?` parameters and returns its rows and how
    /// many rows it changed; records its duration (preparing it when not cached included) in
    /// the statement's histogram.
    func run(_ sql: String, _ bindings: [(any DatabaseValueConvertible)?]) throws(StorageError) -> (rows: [Row], changed: Int) {
        let started = metrics == nil ? nil : ContinuousClock.now
        let prepared = try preparedStatement(for: sql)
        defer {
            if let started, let durations = prepared.durations { durations.observe(since: started) }
        }
        guard bindings.count == prepared.parameterCount else {
            throw StorageError.misuse("the statement takes \(prepared.parameterCount) bindings, not \(bindings.count)", sql: sql)
        }
        let parameters = try bindings.map { value throws(StorageError) in try Self.text(of: value?.databaseValue ?? .null, sql: sql) }
        let answer: PostgreSQLRows
        do {
            answer = try connection.executePrepared(prepared.name, parameters)
        } catch {
            throw StorageError(error, sql: sql)
        }
        return (Self.rows(of: answer), answer.affected)
    }

    /// Runs several `;`-separated statements without parameters, as migrations do.
    func script(_ sql: String) throws(StorageError) {
        do {
            try connection.executeScript(sql)
        } catch {
            throw StorageError(error, sql: sql)
        }
    }

    private func preparedStatement(for sql: String) throws(StorageError) -> Prepared {
        clock += 1
        if var prepared = statements[sql] {
            prepared.lastUse = clock
            statements[sql] = prepared
            return prepared
        }
        let (numbered, count) = Self.numberingParameters(of: sql)
        // Without a cache, the unnamed statement: each preparation replaces the last.
        let name = cacheCapacity > 0 ? "storage_\(nextName + 1)" : ""
        do {
            try connection.prepare(name, numbered)
        } catch {
            throw StorageError(error, sql: sql)
        }
        nextName += 1
        preparedStatementCount += 1
        let prepared = Prepared(name: name, parameterCount: count, lastUse: clock, durations: metrics?.queryDurations(sql: sql))
        guard cacheCapacity > 0 else { return prepared }
        if statements.count >= cacheCapacity, let oldest = statements.min(by: { $0.value.lastUse < $1.value.lastUse }) {
            statements[oldest.key] = nil
            _ = try? connection.executeScript("DEALLOCATE \(oldest.value.name)")
        }
        statements[sql] = prepared
        return prepared
    }

    // MARK: SQL text

    /// `sql` with each `?` parameter outside quotes and comments numbered `$1`, `$2` …, and
    /// how many there are.
    static func numberingParameters(of sql: String) -> (sql: String, count: Int) {
        var output = ""
        output.reserveCapacity(sql.utf8.count + 8)
        var count = 0
        var characters = sql.makeIterator()
        var pending: Character? = nil
        func next() -> Character? {
            if let character = pending {
                pending = nil
                return character
            }
            return characters.next()
        }
        while let character = next() {
            switch character {
            case "?":
                count += 1
                output += "$\(count)"
            case "'", "\"":
                // A quoted literal or identifier; a doubled quote inside it is an escaped one.
                output.append(character)
                while let inner = next() {
                    output.append(inner)
                    if inner == character { break }
                }
            case "-":
                output.append(character)
                guard let following = next() else { break }
                if following == "-" {
                    output.append(following)
                    while let inner = next() {
                        output.append(inner)
                        if inner == "\n" { break }
                    }
                } else {
                    pending = following
                }
            case "/":
                output.append(character)
                guard let following = next() else { break }
                if following == "*" {
                    output.append(following)
                    var previous: Character = " "
                    while let inner = next() {
                        output.append(inner)
                        if previous == "*" && inner == "/" { break }
                        previous = inner
                    }
                } else {
                    pending = following
                }
            default:
                output.append(character)
            }
        }
        return (output, count)
    }

    /// `name` as a quoted SQL identifier.
    static func quoted(_ name: String) -> String {
        "\"" + name.replacing("\"", with: "\"\"") + "\""
    }

    // MARK: Values

    /// The text form of `value` that PostgreSQL reads for a parameter; nil for NULL.
    ///
    /// - Throws: `StorageError` (`isTypeMismatch`) for text holding a NUL character, which
    ///   PostgreSQL's `text` cannot store (SQLite can): refused, never cut short.
    static func text(of value: DatabaseValue, sql: String) throws(StorageError) -> String? {
        switch value {
        case .null:
            return nil
        case .integer(let integer):
            return String(integer)
        case .real(let real):
            if real.isNaN { return "NaN" }
            if real.isInfinite { return real < 0 ? "-Infinity" : "Infinity" }
            return String(real)
        case .text(let text):
            guard !text.utf8.contains(0) else {
                throw StorageError.mismatch("text holding a NUL character cannot be stored in PostgreSQL", sql: sql)
            }
            return text
        case .blob(let bytes):
            // bytea's hex input form.
            var hex = "\\x"
            hex.reserveCapacity(2 + bytes.count * 2)
            for byte in bytes {
                hex.append(hexDigits[Int(byte >> 4)])
                hex.append(hexDigits[Int(byte & 0x0F)])
            }
            return hex
        }
    }

    /// The rows of an answer, each value typed by its column's type.
    static func rows(of answer: PostgreSQLRows) -> [Row] {
        let columns = ColumnNames(answer.columns)
        let kinds = answer.types.map(ColumnKind.init(type:))
        return answer.rows.map { values in
            Row(values: zip(values, kinds).map { value, kind in kind.decode(value) }, columns: columns)
        }
    }

    /// How a column's text is read back, by the column's type OID.
    enum ColumnKind {
        case integer, real, boolean, numeric, bytes, text

        init(type: UInt32) {
            switch type {
            case 20, 21, 23, 26: self = .integer  // int8, int2, int4, oid
            case 700, 701: self = .real  // float4, float8
            case 16: self = .boolean
            case 1700: self = .numeric  // sum() of bigint answers numeric
            case 17: self = .bytes
            default: self = .text
            }
        }

        func decode(_ text: String?) -> DatabaseValue {
            guard let text else { return .null }
            switch self {
            case .integer:
                return Int64(text).map(DatabaseValue.integer) ?? .text(text)
            case .real:
                switch text {
                case "NaN": return .real(.nan)
                case "Infinity": return .real(.infinity)
                case "-Infinity": return .real(-.infinity)
                default: return Double(text).map(DatabaseValue.real) ?? .text(text)
                }
            case .boolean:
                return .integer(text == "t" ? 1 : 0)
            case .numeric:
                if let integer = Int64(text) { return .integer(integer) }
                return Double(text).map(DatabaseValue.real) ?? .text(text)
            case .bytes:
                return .blob(Self.bytes(fromHex: text) ?? Array(text.utf8))
            case .text:
                return .text(text)
            }
        }

        /// The bytes of bytea's hex output form (`\x0aff…`), or nil when it is not that form.
        static func bytes(fromHex text: String) -> [UInt8]? {
            let utf8 = Array(text.utf8)
            guard utf8.count >= 2, utf8[0] == UInt8(ascii: "\\"), utf8[1] == UInt8(ascii: "x"), utf8.count % 2 == 0 else {
                return nil
            }
            var bytes: [UInt8] = []
            bytes.reserveCapacity((utf8.count - 2) / 2)
            var index = 2
            while index < utf8.count {
                guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
                bytes.append(high << 4 | low)
                index += 2
            }
            return bytes
        }

        private static func nibble(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
            default: nil
            }
        }
    }
}

private let hexDigits: [Character] = Array("0123456789abcdef")

@available(*, unavailable, message: "a connection is confined to its worker thread")
extension PostgreSQLSession: Sendable {}

extension StorageError {
    /// The storage error for what PostgreSQL answered, coded as its SQLite counterpart so that
    /// callers test one set of properties (`isUniqueViolation`, `isBusy` …) whatever the
    /// backend; the SQLSTATE is kept.
    init(_ error: PostgreSQLError, sql: String? = nil) {
        let code: Int32 =
            switch error.sqlState {
            case "23505": storageConstraintUnique
            case "23503": storageConstraintForeignKey
            case let state? where state.hasPrefix("23"): storageConstraint
            case "40001", "40P01", "55P03", "57014": storageBusy  // serialization, deadlock, lock, cancelled
            case "25006": storageReadOnly
            case "22P02", "22003", "42804": storageMismatch  // bad text for a type, out of range, wrong type
            case let state? where state.hasPrefix("08") || state.hasPrefix("57P"): storageIOError
            case nil: storageIOError  // no server answer: the connection failed
            default: storageGenericError
            }
        var message = error.message
        if let detail = error.detail { message += " (\(detail))" }
        self.init(extendedResultCode: code, message: message, sql: sql)
        self.sqlState = error.sqlState
    }
}
