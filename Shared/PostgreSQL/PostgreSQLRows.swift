/// What a statement answered: its columns and rows as PostgreSQL's text format gives them
/// (nil for SQL NULL), and how many rows a command changed.
public struct PostgreSQLRows: Sendable, Equatable {
    /// The column names, in order.
    public var columns: [String]
    /// The type of each column, as the server's type OID (`20` bigint, `25` text, `17` bytea …).
    public var types: [UInt32]
    /// The rows, each a value per column.
    public var rows: [[String?]]
    /// The rows an INSERT, UPDATE or DELETE changed; 0 for other statements.
    public var affected: Int

    /// Rows as a statement answered them; `types` defaults to "unknown" (0) for each column.
    public init(columns: [String], types: [UInt32]? = nil, rows: [[String?]], affected: Int) {
        self.columns = columns
        self.types = types ?? Array(repeating: 0, count: columns.count)
        self.rows = rows
        self.affected = affected
    }

    /// The value of `column` in row `index`; nil for NULL or a column the rows do not have.
    public func value(_ column: String, row index: Int = 0) -> String? {
        guard rows.indices.contains(index), let position = columns.firstIndex(of: column) else { return nil }
        return rows[index][position]
    }
}
