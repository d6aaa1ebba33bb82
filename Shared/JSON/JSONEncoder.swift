public import Foundation

/// Encodes `Encodable` values as compact UTF-8 JSON, for RPC's `JSONCodec`; a faster stand-in for
/// Foundation's `JSONEncoder` with `[.sortedKeys, .withoutEscapingSlashes]` and default
/// strategies, whose output it reproduces byte for byte for our message types.
///
/// Values are written straight into one byte buffer as they are encoded (``JSONByteWriter``);
/// no intermediate tree is built. A non-finite floating-point number is an `EncodingError`.
public enum JSONEncoder {
    /// The JSON for `value`.
    public static func encode<Value: Encodable>(_ value: Value) throws -> Data {
        let writer = JSONByteWriter()
        try writer.encodeValue(value, isTopLevel: true)
        return writer.bytes.takeData()
    }
}

extension JSONByteWriter {
    /// Writes any `Encodable`, closing whatever containers it opened. `Data`, `URL` and
    /// `Decimal` are written as Foundation's encoder writes them by default (base64 string,
    /// absolute string, number), not through their own `Codable` conformances.
    func encodeValue<Value: Encodable>(_ value: Value, isTopLevel: Bool = false) throws {
        if Value.self == Data.self || Value.self == URL.self || Value.self == Decimal.self {
            return try encodeFoundationValue(value)
        }
        let depth = frames.count
        let start = bytes.count
        try value.encode(to: JSONByteEncoder(writer: self, depth: depth, start: start))
        while frames.count > depth { closeTopFrame() }
        if bytes.count == start {
            guard !isTopLevel else {
                throw EncodingError.invalidValue(
                    value, EncodingError.Context(codingPath: [], debugDescription: "Top-level \(Value.self) did not encode any values."))
            }
            // Like Foundation, a value that encodes nothing is an empty object.
            appendASCII("{}")
        }
    }

    private func encodeFoundationValue<Value: Encodable>(_ value: Value) throws {
        switch value {
        case let data as Data:
            writeString(data.base64EncodedString())
        case let url as URL:
            writeString(url.absoluteString)
        case let decimal as Decimal:
            guard !decimal.isNaN else { throw nonFiniteError(decimal) }
            var text = decimal.description
            text.withUTF8 { bytes.append($0) }
        default:
            try value.encode(to: JSONByteEncoder(writer: self, depth: frames.count, start: bytes.count))
        }
    }
}

/// The `Encoder` for one value being written by a ``JSONByteWriter``.
///
/// Three words, so it fits an existential's inline buffer: passing it as `any Encoder` does not
/// allocate. Asking twice for a keyed container returns the same object, as in Foundation.
struct JSONByteEncoder: Encoder {
    /// Where the value is written.
    let writer: JSONByteWriter
    /// How many frames were open when the value began.
    let depth: Int
    /// The offset where the value begins.
    let start: Int

    /// The path to the value.
    var codingPath: [any CodingKey] { writer.codingPath }

    /// Always empty: the codec has no options.
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// The value as an object.
    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let frame = writer.container(isObject: true, depth: depth, start: start)
        return KeyedEncodingContainer(JSONKeyedEncodingContainer<Key>(writer: writer, frame: frame))
    }

    /// The value as an array.
    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        JSONUnkeyedEncodingContainer(writer: writer, frame: writer.container(isObject: false, depth: depth, start: start))
    }

    /// The value itself.
    func singleValueContainer() -> any SingleValueEncodingContainer {
        JSONSingleValueEncodingContainer(writer: writer, depth: depth, start: start)
    }
}

/// Writes one value of a ``JSONByteWriter`` directly; only one value may be written.
struct JSONSingleValueEncodingContainer: SingleValueEncodingContainer, IntegerEncoding {
    /// Where the value is written.
    let writer: JSONByteWriter
    /// How many frames were open when the value began.
    let depth: Int
    /// The offset where the value begins.
    let start: Int

    /// The path to the value.
    var codingPath: [any CodingKey] { writer.codingPath }

    /// Throws unless nothing has been written for this value yet.
    private func checkUnwritten(_ value: @autoclosure () -> Any) throws {
        guard writer.frames.count == depth, writer.bytes.count == start else {
            throw EncodingError.invalidValue(
                value(),
                EncodingError.Context(
                    codingPath: codingPath, debugDescription: "A single value container can encode only one value."))
        }
    }

    mutating func write(_ value: Int64) throws {
        try checkUnwritten(value)
        writer.writeInteger(value)
    }

    mutating func write(_ value: UInt64) throws {
        try checkUnwritten(value)
        writer.writeInteger(value)
    }

    /// Writes `null`.
    mutating func encodeNil() throws {
        try checkUnwritten(Never?.none as Any)
        writer.writeNull()
    }

    /// Writes a Boolean.
    mutating func encode(_ value: Bool) throws {
        try checkUnwritten(value)
        writer.writeBool(value)
    }

    /// Writes a string.
    mutating func encode(_ value: String) throws {
        try checkUnwritten(value)
        writer.writeString(value)
    }

    /// Writes a finite `Double`.
    mutating func encode(_ value: Double) throws {
        try checkUnwritten(value)
        guard value.isFinite else { throw writer.nonFiniteError(value) }
        writer.writeDouble(value)
    }

    /// Writes a finite `Float`.
    mutating func encode(_ value: Float) throws {
        try checkUnwritten(value)
        guard value.isFinite else { throw writer.nonFiniteError(value) }
        writer.writeFloat(value)
    }


    /// Writes any `Encodable`.
    mutating func encode<Value: Encodable>(_ value: Value) throws {
        try checkUnwritten(value)
        let checkpoint = writer.checkpoint()
        do {
            try writer.encodeValue(value)
        } catch {
            writer.rollBack(to: checkpoint)
            throw error
        }
    }
}
