/// One row of a query result: the values of its columns, readable by index or by name.
///
/// A row is a plain value, detached from the statement that produced it, so it can be kept
/// and sent across tasks freely.
///
/// ```swift
/// let id: Int64 = try row.value(at: 0)
/// let email = try row.value(named: "email", as: String.self)
/// let verifiedAt = try row.value(named: "verified_at", as: Int64?.self)  // nil for NULL
/// ```
package struct Row: Sendable, Equatable {
    /// The column values, in the order of the query's result columns.
    package let values: [DatabaseValue]
    /// The column names, shared by every row of one result.
    private let columns: ColumnNames

    /// Creates a row from its values and the result's column names (same count).
    init(values: [DatabaseValue], columns: ColumnNames) {
        precondition(values.count == columns.names.count, "a row needs one value per column")
        self.values = values
        self.columns = columns
    }

    /// The names of the result columns, as SQLite reports them (the `AS` name when given).
    package var columnNames: [String] { columns.names }

    /// The number of columns.
    package var count: Int { values.count }

    /// The raw value at `index`, which must be less than `count`.
    package subscript(index: Int) -> DatabaseValue { values[index] }

    /// The raw value of the column named `name` (case-insensitive), or nil when there is none.
    package subscript(name: String) -> DatabaseValue? {
        columns.index(of: name).map { values[$0] }
    }

    /// Decodes the column at `index` as `T`.
    ///
    /// - Throws: `StorageError` (`isMisuse`) for an index out of range, or (`isTypeMismatch`)
    ///   when the stored value is not a `T`, for example `NULL` decoded as a non-optional type.
    package func value<T: DatabaseValueConvertible>(at index: Int, as type: T.Type = T.self) throws -> T {
        guard values.indices.contains(index) else {
            throw StorageError.misuse("column index \(index) is out of range; the row has \(count) columns")
        }
        return try decode(values[index], column: "\(index) (\(columns.names[index]))", as: type)
    }

    /// Decodes the column named `name` (case-insensitive) as `T`.
    ///
    /// - Throws: `StorageError` (`isMisuse`) when no column has that name, or (`isTypeMismatch`)
    ///   when the stored value is not a `T`.
    package func value<T: DatabaseValueConvertible>(named name: String, as type: T.Type = T.self) throws -> T {
        guard let index = columns.index(of: name) else {
            throw StorageError.misuse("no column named '\(name)'; the row has \(columns.names)")
        }
        return try decode(values[index], column: "'\(name)'", as: type)
    }

    /// `column` names the column in the error only: built when decoding fails, not on every value.
    private func decode<T: DatabaseValueConvertible>(
        _ value: DatabaseValue, column: @autoclosure () -> String, as type: T.Type
    ) throws -> T {
        guard let decoded = T.decode(from: value) else {
            throw StorageError.mismatch("column \(column()) holds \(value.storageClassName), which is not a \(T.self)")
        }
        return decoded
    }

    /// Rows are equal when their column names and values are equal.
    package static func == (lhs: Row, rhs: Row) -> Bool {
        lhs.values == rhs.values && lhs.columns.names == rhs.columns.names
    }
}

/// The column names of one result, with a lookup table; shared by all the result's rows.
///
/// Immutable after creation, hence `Sendable`.
final class ColumnNames: Sendable {
    /// The names in column order.
    let names: [String]
    /// The index of the first column with each (lowercased) name.
    private let indexByName: [String: Int]

    /// Creates the table for `names`.
    init(_ names: [String]) {
        self.names = names
        var indexByName: [String: Int] = [:]
        for (index, name) in names.enumerated() where indexByName[name.lowercased()] == nil {
            indexByName[name.lowercased()] = index
        }
        self.indexByName = indexByName
    }

    /// The index of the first column named `name`, compared case-insensitively as SQL does.
    func index(of name: String) -> Int? {
        indexByName[name.lowercased()]
    }
}
