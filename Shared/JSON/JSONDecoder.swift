public import Foundation

/// Decodes `Decodable` values from UTF-8 JSON, for RPC's `JSONCodec`; a faster stand-in for
/// Foundation's `JSONDecoder` with its default strategies.
///
/// One pass turns the bytes into tokens (``JSONScanner``); the containers then read tokens,
/// comparing member names as raw bytes, and compute a coding path only for an error. Syntax
/// errors are `DecodingError.dataCorrupted` with an empty path and a ``JSONSyntaxError`` as
/// underlying error; type errors are `DecodingError`s naming the path of the bad value.
///
/// Deliberate differences from Foundation: integers must be integer literals (`1.0` and `1e2`
/// are rejected for `Int`); trailing commas are rejected; a duplicated member's last value
/// wins (Foundation keeps the first); invalid UTF-8 is rejected anywhere, not only in strings
/// that are read; nesting deeper than ``JSONScanner/maximumDepth`` is rejected (Foundation
/// allows 512); and the input must be UTF-8 (a byte order mark is skipped).
public enum JSONDecoder {
    /// Decodes a `Value` from the JSON in `data`.
    public static func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value {
        try data.withUnsafeBytes { raw in
            var document: JSONDocument
            do {
                document = try JSONDocument(bytes: raw.assumingMemoryBound(to: UInt8.self))
            } catch {
                throw DecodingError.dataCorrupted(
                    DecodingError.Context(
                        codingPath: [], debugDescription: "The given data was not valid JSON.", underlyingError: error))
            }
            // The bytes are only borrowed: if the value kept a decoder, give it a copy.
            defer { if !isKnownUniquelyReferenced(&document) { document.detach() } }
            return try document.decodeValue(type, at: 0)
        }
    }
}

/// The `Decoder` for one value of a ``JSONDocument``.
///
/// Two words, so it fits an existential's inline buffer: passing it as `any Decoder` does not
/// allocate.
struct JSONTokenDecoder: Decoder {
    /// The message being decoded.
    let document: JSONDocument
    /// The token of the value this decoder reads.
    let index: Int

    /// The path to this value.
    var codingPath: [any CodingKey] { document.codingPath(of: index) }

    /// Always empty: the codec has no options.
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// The value as an object.
    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(try JSONKeyedDecodingContainer<Key>(document: document, object: index))
    }

    /// The value as an array.
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try JSONUnkeyedDecodingContainer(document: document, array: index)
    }

    /// The value itself.
    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        JSONSingleValueDecodingContainer(document: document, index: index)
    }
}

/// Reads one value of a ``JSONDocument`` as a single value.
struct JSONSingleValueDecodingContainer: SingleValueDecodingContainer {
    /// The message being decoded.
    let document: JSONDocument
    /// The token of the value.
    let index: Int

    /// The path to the value.
    var codingPath: [any CodingKey] { document.codingPath(of: index) }

    /// Whether the value is null.
    func decodeNil() -> Bool { document.token(index).kind == .null }
    /// The value as a Boolean.
    func decode(_ type: Bool.Type) throws -> Bool { try document.decodeBool(at: index) }
    /// The value as a string.
    func decode(_ type: String.Type) throws -> String { try document.decodeString(at: index) }
    /// The value as a `Double`.
    func decode(_ type: Double.Type) throws -> Double { try document.decodeDouble(at: index) }
    /// The value as a `Float`.
    func decode(_ type: Float.Type) throws -> Float { try document.decodeFloat(at: index) }
    /// The value as an `Int`.
    func decode(_ type: Int.Type) throws -> Int { try document.decodeInteger(type, at: index) }
    /// The value as an `Int8`.
    func decode(_ type: Int8.Type) throws -> Int8 { try document.decodeInteger(type, at: index) }
    /// The value as an `Int16`.
    func decode(_ type: Int16.Type) throws -> Int16 { try document.decodeInteger(type, at: index) }
    /// The value as an `Int32`.
    func decode(_ type: Int32.Type) throws -> Int32 { try document.decodeInteger(type, at: index) }
    /// The value as an `Int64`.
    func decode(_ type: Int64.Type) throws -> Int64 { try document.decodeInteger(type, at: index) }
    /// The value as a `UInt`.
    func decode(_ type: UInt.Type) throws -> UInt { try document.decodeInteger(type, at: index) }
    /// The value as a `UInt8`.
    func decode(_ type: UInt8.Type) throws -> UInt8 { try document.decodeInteger(type, at: index) }
    /// The value as a `UInt16`.
    func decode(_ type: UInt16.Type) throws -> UInt16 { try document.decodeInteger(type, at: index) }
    /// The value as a `UInt32`.
    func decode(_ type: UInt32.Type) throws -> UInt32 { try document.decodeInteger(type, at: index) }
    /// The value as a `UInt64`.
    func decode(_ type: UInt64.Type) throws -> UInt64 { try document.decodeInteger(type, at: index) }
    /// The value as any `Decodable`.
    func decode<Value: Decodable>(_ type: Value.Type) throws -> Value { try document.decodeValue(type, at: index) }
}
