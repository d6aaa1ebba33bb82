/// One SQLite value, in one of SQLite's five storage classes.
///
/// Rows hold their columns as `DatabaseValue`s; typed access goes through
/// `DatabaseValueConvertible` (see `Row.value(at:as:)`).
package enum DatabaseValue: Sendable, Hashable {
    /// SQL `NULL`.
    case null
    /// A 64-bit signed integer (`INTEGER`).
    case integer(Int64)
    /// An IEEE 754 double (`REAL`).
    case real(Double)
    /// UTF-8 text (`TEXT`).
    case text(String)
    /// Raw bytes (`BLOB`).
    case blob([UInt8])

    /// Whether this is SQL `NULL`.
    package var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The storage class's SQL name, for messages: `NULL`, `INTEGER`, `REAL`, `TEXT` or `BLOB`.
    package var storageClassName: String {
        switch self {
        case .null: "NULL"
        case .integer: "INTEGER"
        case .real: "REAL"
        case .text: "TEXT"
        case .blob: "BLOB"
        }
    }
}

extension DatabaseValue: CustomStringConvertible {
    /// The value as it would be written in SQL, blobs abbreviated to their length.
    package var description: String {
        switch self {
        case .null: "NULL"
        case .integer(let value): String(value)
        case .real(let value): String(value)
        case .text(let value): "'\(value.replacing("'", with: "''"))'"
        case .blob(let bytes): "<\(bytes.count) bytes>"
        }
    }
}

extension DatabaseValue: ExpressibleByNilLiteral {
    /// Creates SQL `NULL` from `nil`.
    package init(nilLiteral: ()) { self = .null }
}

extension DatabaseValue: ExpressibleByIntegerLiteral {
    /// Creates an `INTEGER` from an integer literal.
    package init(integerLiteral value: Int64) { self = .integer(value) }
}

extension DatabaseValue: ExpressibleByFloatLiteral {
    /// Creates a `REAL` from a floating-point literal.
    package init(floatLiteral value: Double) { self = .real(value) }
}

extension DatabaseValue: ExpressibleByStringLiteral {
    /// Creates `TEXT` from a string literal.
    package init(stringLiteral value: String) { self = .text(value) }
}

extension DatabaseValue: ExpressibleByBooleanLiteral {
    /// Creates an `INTEGER` 1 or 0 from a Boolean literal, as SQLite stores Booleans.
    package init(booleanLiteral value: Bool) { self = .integer(value ? 1 : 0) }
}
