#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

/// A Swift type that can be bound to a statement parameter and decoded from a column.
///
/// The storage layer provides conformances for `Int`, `Int64`, `Double`, `String`, `[UInt8]`,
/// `Data`, `Bool`, `DatabaseValue` and `Optional` of any of them (where `nil` is SQL `NULL`).
/// Decoding is strict: a `TEXT` column does not decode as `Int`; the one widening allowed is
/// `INTEGER` to `Double`.
package protocol DatabaseValueConvertible: Sendable {
    /// The value to store.
    var databaseValue: DatabaseValue { get }

    /// Decodes a stored value, or returns nil when `value` does not represent this type.
    static func decode(from value: DatabaseValue) -> Self?
}

extension DatabaseValue: DatabaseValueConvertible {
    /// The value itself.
    package var databaseValue: DatabaseValue { self }

    /// The value itself; never nil.
    package static func decode(from value: DatabaseValue) -> DatabaseValue? { value }
}

extension Int64: DatabaseValueConvertible {
    /// The integer as `INTEGER`.
    package var databaseValue: DatabaseValue { .integer(self) }

    /// The integer of an `INTEGER` value.
    package static func decode(from value: DatabaseValue) -> Int64? {
        if case .integer(let integer) = value { return integer }
        return nil
    }
}

extension Int: DatabaseValueConvertible {
    /// The integer as `INTEGER`.
    package var databaseValue: DatabaseValue { .integer(Int64(self)) }

    /// The integer of an `INTEGER` value, when it fits in `Int`.
    package static func decode(from value: DatabaseValue) -> Int? {
        if case .integer(let integer) = value { return Int(exactly: integer) }
        return nil
    }
}

extension Double: DatabaseValueConvertible {
    /// The number as `REAL`.
    package var databaseValue: DatabaseValue { .real(self) }

    /// The number of a `REAL` value, or of an `INTEGER` value (as SQLite's `SUM` can return).
    package static func decode(from value: DatabaseValue) -> Double? {
        switch value {
        case .real(let real): real
        case .integer(let integer): Double(integer)
        default: nil
        }
    }
}

extension Bool: DatabaseValueConvertible {
    /// The Boolean as `INTEGER` 1 or 0, as SQLite stores Booleans.
    package var databaseValue: DatabaseValue { .integer(self ? 1 : 0) }

    /// True for a non-zero `INTEGER`, false for zero.
    package static func decode(from value: DatabaseValue) -> Bool? {
        if case .integer(let integer) = value { return integer != 0 }
        return nil
    }
}

extension String: DatabaseValueConvertible {
    /// The string as UTF-8 `TEXT`.
    package var databaseValue: DatabaseValue { .text(self) }

    /// The string of a `TEXT` value.
    package static func decode(from value: DatabaseValue) -> String? {
        if case .text(let text) = value { return text }
        return nil
    }
}

extension [UInt8]: DatabaseValueConvertible {
    /// The bytes as `BLOB`.
    package var databaseValue: DatabaseValue { .blob(self) }

    /// The bytes of a `BLOB` value.
    package static func decode(from value: DatabaseValue) -> [UInt8]? {
        if case .blob(let bytes) = value { return bytes }
        return nil
    }
}

extension Data: DatabaseValueConvertible {
    /// The bytes as `BLOB`.
    package var databaseValue: DatabaseValue { .blob([UInt8](self)) }

    /// The bytes of a `BLOB` value.
    package static func decode(from value: DatabaseValue) -> Data? {
        if case .blob(let bytes) = value { return Data(bytes) }
        return nil
    }
}

extension Optional: DatabaseValueConvertible where Wrapped: DatabaseValueConvertible {
    /// The wrapped value, or SQL `NULL` for `nil`.
    package var databaseValue: DatabaseValue {
        switch self {
        case .none: .null
        case .some(let wrapped): wrapped.databaseValue
        }
    }

    /// `nil` for SQL `NULL`, otherwise the wrapped type's decoding.
    package static func decode(from value: DatabaseValue) -> Wrapped?? {
        if value.isNull { return .some(nil) }
        return Wrapped.decode(from: value).map { .some($0) }
    }
}
