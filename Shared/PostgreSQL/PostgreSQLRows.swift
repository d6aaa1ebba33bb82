/// What a statement answered: its columns and rows as PostgreSQL's text format gives them
/// (nil for SQL NULL), and how many rows a command changed.
public struct PostgreSQLRows: Sendable, Equatable {
    /// The column names, in order.
    public var columns: [String]
    /// The rows, each a value per column.
    public var rows: [[String?]]
    /// The rows an INSERT, UPDATE or DELETE changed; 0 for other statements.
    public var affected: Int

    /// The value of `column` in row `index`; nil for NULL or a column the rows do not have.
    public func value(_ column: String, row index: Int = 0) -> String? {
        guard rows.indices.contains(index), let position = columns.firstIndex(of: column) else { return nil }
        return rows[index][position]
    }
}
