import Foundation

/// Typed reads of one token, throwing the `DecodingError` that `JSONCodec` turns into a field
/// violation.
extension JSONDocument {
    /// The Boolean at `index`.
    func decodeBool(at index: Int) throws -> Bool {
        switch token(index).kind {
        case .true: return true
        case .false: return false
        default: throw mismatch(Bool.self, at: index)
        }
    }

    /// The string at `index`.
    func decodeString(at index: Int) throws -> String {
        guard token(index).kind == .string else { throw mismatch(String.self, at: index) }
        return string(at: index)
    }

    /// The integer at `index`: only an integer literal in `Integer`'s range (no fraction, no
    /// exponent, so `1.0` is rejected).
    func decodeInteger<Integer: FixedWidthInteger>(_ type: Integer.Type, at index: Int) throws -> Integer {
        let token = token(index)
        guard token.kind == .number, token.isIntegerLiteral else { throw mismatch(type, at: index) }
        guard let value = integer(type, at: index) else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: codingPath(of: index),
                    debugDescription: "expected an integer from \(Integer.min) to \(Integer.max)"))
        }
        return value
    }

    /// The number at `index` as a `Double`; a literal beyond `Double`'s range, or so small that
    /// it would read as zero, is an error.
    func decodeDouble(at index: Int) throws -> Double {
        let token = token(index)
        guard token.kind == .number else { throw mismatch(Double.self, at: index) }
        // Up to 15 digits, an integer converts exactly and without parsing text.
        if token.isIntegerLiteral, token.extent <= 15, let value = integer(Int64.self, at: index) {
            return value == 0 && bytes[Int(token.start)] == UInt8(ascii: "-") ? -0.0 : Double(value)
        }
        guard let value = Double(numberText(at: index)), value.isFinite, value != 0 || isZeroLiteral(at: index) else {
            throw outOfRange(Double.self, at: index)
        }
        return value
    }

    /// The number at `index` as a `Float`, rounded once from the literal.
    func decodeFloat(at index: Int) throws -> Float {
        guard token(index).kind == .number else { throw mismatch(Float.self, at: index) }
        guard let value = Float(numberText(at: index)), value.isFinite, value != 0 || isZeroLiteral(at: index) else {
            throw outOfRange(Float.self, at: index)
        }
        return value
    }

    /// Decodes any `Decodable` from the value at `index`. `Data`, `URL` and `Decimal` are
    /// read the way Foundation's `JSONDecoder` reads them by default (base64 string, string,
    /// number) rather than through their own `Codable` conformances.
    func decodeValue<Value: Decodable>(_ type: Value.Type, at index: Int) throws -> Value {
        if type == Data.self || type == URL.self || type == Decimal.self {
            return try decodeFoundationValue(type, at: index)
        }
        return try Value(from: JSONTokenDecoder(document: self, index: index))
    }

    private func decodeFoundationValue<Value: Decodable>(_ type: Value.Type, at index: Int) throws -> Value {
        let value: Any?
        if type == Data.self {
            value = Data(base64Encoded: try decodeString(at: index))
        } else if type == URL.self {
            value = URL(string: try decodeString(at: index))
        } else {
            guard token(index).kind == .number else { throw mismatch(type, at: index) }
            value = Decimal(string: numberText(at: index), locale: nil)
        }
        guard let result = value as? Value else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: codingPath(of: index), debugDescription: "expected a valid \(type)"))
        }
        return result
    }

    /// The error for a value of the wrong kind: `valueNotFound` for null, else `typeMismatch`.
    func mismatch(_ type: Any.Type, at index: Int) -> DecodingError {
        let found = token(index).kind
        let context = DecodingError.Context(
            codingPath: codingPath(of: index), debugDescription: "Expected \(type) but found \(found).")
        return found == .null ? .valueNotFound(type, context) : .typeMismatch(type, context)
    }

    private func outOfRange(_ type: Any.Type, at index: Int) -> DecodingError {
        .dataCorrupted(
            DecodingError.Context(codingPath: codingPath(of: index), debugDescription: "expected a number within the range of \(type)"))
    }

    /// Whether the number at `index` is written as zero, so that a zero result is not a
    /// nonzero literal that underflowed (which Foundation rejects too).
    private func isZeroLiteral(at index: Int) -> Bool {
        for byte in bytes[tokens[index].byteRange] {
            if byte | 0x20 == UInt8(ascii: "e") { return true }
            if byte >= UInt8(ascii: "1") && byte <= UInt8(ascii: "9") { return false }
        }
        return true
    }

    /// The literal text of the number at `index`.
    private func numberText(at index: Int) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[tokens[index].byteRange]), as: UTF8.self)
    }

    /// The integer literal at `index` if it fits `Integer`, accumulated without overflow.
    private func integer<Integer: FixedWidthInteger>(_ type: Integer.Type, at index: Int) -> Integer? {
        let range = tokens[index].byteRange
        var offset = range.lowerBound
        let isNegative = bytes[offset] == UInt8(ascii: "-")
        if isNegative { offset += 1 }
        var value: Integer = 0
        while offset < range.upperBound {
            let digit = Integer(truncatingIfNeeded: bytes[offset] &- UInt8(ascii: "0"))
            let (shifted, overflowed) = value.multipliedReportingOverflow(by: 10)
            let (next, failed) =
                isNegative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
            if overflowed || failed { return nil }
            value = next
            offset += 1
        }
        return value
    }
}
