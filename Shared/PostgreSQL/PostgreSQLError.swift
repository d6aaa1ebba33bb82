/// What a PostgreSQL call failed with: the server's SQLSTATE (`23505` a unique violation,
/// `40001` a serialization failure …) when the server answered, its message and detail.
public struct PostgreSQLError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The five-character SQLSTATE; nil when no server answered (a connection that failed,
    /// closed, or was never made).
    public var sqlState: String?
    /// The primary message (the server's, or libpq's).
    public var message: String
    /// The server's detail line, when it gave one.
    public var detail: String?

    /// An error with `message`, the SQLSTATE and detail when known.
    public init(sqlState: String? = nil, message: String, detail: String? = nil) {
        self.sqlState = sqlState
        self.message = message
        self.detail = detail
    }

    /// Whether the server refused the statement for a unique constraint (SQLSTATE 23505).
    public var isUniqueViolation: Bool { sqlState == "23505" }

    /// Whether retrying the transaction may succeed: a serialization failure (40001) or a
    /// deadlock (40P01), which `SERIALIZABLE` transactions must expect.
    public var isRetryable: Bool { sqlState == "40001" || sqlState == "40P01" }

    public var description: String {
        var text = sqlState.map { "PostgreSQL \($0): \(message)" } ?? "PostgreSQL: \(message)"
        if let detail { text += " (\(detail))" }
        return text
    }
}
