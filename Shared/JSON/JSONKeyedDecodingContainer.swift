/// Reads the members of one object of a ``JSONDocument``.
///
/// A missing member is `keyNotFound`; `decodeIfPresent` treats missing and null alike. When a
/// name occurs twice, the last member wins.
struct JSONKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    /// The message being decoded.
    let document: JSONDocument
    /// The token of the object.
    let object: Int

    /// Reads the object at `object`; anything else is a type mismatch (or `valueNotFound` for null).
    init(document: JSONDocument, object: Int) throws {
        guard document.token(object).kind == .object else { throw document.mismatch([String: Any].self, at: object) }
        self.document = document
        self.object = object
    }

    /// The path to the object.
    var codingPath: [any CodingKey] { document.codingPath(of: object) }

    /// The member names that `Key` can represent.
    var allKeys: [Key] { document.memberNames(in: object).compactMap(Key.init(stringValue:)) }

    /// Whether the object has a member named `key`.
    func contains(_ key: Key) -> Bool { document.member(named: key.stringValue, in: object) != nil }

    private func value(for key: Key) throws -> Int {
        guard let value = document.member(named: key.stringValue, in: object) else {
            throw DecodingError.keyNotFound(
                key, DecodingError.Context(codingPath: codingPath, debugDescription: "No member \"\(key.stringValue)\"."))
        }
        return value
    }

    private func presentValue(for key: Key) -> Int? {
        guard let value = document.member(named: key.stringValue, in: object), document.tokens[value].kind != .null else {
            return nil
        }
        return value
    }

    /// Whether the member is null; a missing member is `keyNotFound`.
    func decodeNil(forKey key: Key) throws -> Bool { document.token(try value(for: key)).kind == .null }
    /// The member as a Boolean.
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try document.decodeBool(at: value(for: key)) }
    /// The member as a string.
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try document.decodeString(at: value(for: key)) }
    /// The member as a `Double`.
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try document.decodeDouble(at: value(for: key)) }
    /// The member as a `Float`.
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try document.decodeFloat(at: value(for: key)) }
    /// The member as an `Int`.
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try document.decodeInteger(type, at: value(for: key)) }
    /// The member as an `Int8`.
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try document.decodeInteger(type, at: value(for: key)) }
    /// The member as an `Int16`.
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try document.decodeInteger(type, at: value(for: key)) }
    /// The member as an `Int32`.
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try document.decodeInteger(type, at: value(for: key)) }
    /// The member as an `Int64`.
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try document.decodeInteger(type, at: value(for: key)) }
    /// The member as a `UInt`.
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try document.decodeInteger(type, at: value(for: key)) }
    /// The member as a `UInt8`.
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try document.decodeInteger(type, at: value(for: key)) }
    /// The member as a `UInt16`.
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try document.decodeInteger(type, at: value(for: key)) }
    /// The member as a `UInt32`.
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try document.decodeInteger(type, at: value(for: key)) }
    /// The member as a `UInt64`.
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try document.decodeInteger(type, at: value(for: key)) }
    /// The member as any `Decodable`.
    func decode<Value: Decodable>(_ type: Value.Type, forKey key: Key) throws -> Value {
        try document.decodeValue(type, at: value(for: key))
    }

    /// The member as a Boolean, or nil when it is missing or null.
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        try presentValue(for: key).map(document.decodeBool(at:))
    }
    /// The member as a string, or nil when it is missing or null.
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        try presentValue(for: key).map(document.decodeString(at:))
    }
    /// The member as a `Double`, or nil when it is missing or null.
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        try presentValue(for: key).map(document.decodeDouble(at:))
    }
    /// The member as an `Int`, or nil when it is missing or null.
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        try presentValue(for: key).map { try document.decodeInteger(type, at: $0) }
    }
    /// The member as an `Int64`, or nil when it is missing or null.
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
        try presentValue(for: key).map { try document.decodeInteger(type, at: $0) }
    }
    /// The member as an `Int32`, or nil when it is missing or null.
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? {
        try presentValue(for: key).map { try document.decodeInteger(type, at: $0) }
    }
    /// The member as any `Decodable`, or nil when it is missing or null.
    func decodeIfPresent<Value: Decodable>(_ type: Value.Type, forKey key: Key) throws -> Value? {
        try presentValue(for: key).map { try document.decodeValue(type, at: $0) }
    }

    /// The member as an object.
    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        KeyedDecodingContainer(try JSONKeyedDecodingContainer<NestedKey>(document: document, object: value(for: key)))
    }

    /// The member as an array.
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try JSONUnkeyedDecodingContainer(document: document, array: value(for: key))
    }

    /// A decoder for the member `super` (null when it is missing).
    func superDecoder() throws -> any Decoder { superDecoder(named: JSONPathKey.superKey) }

    /// A decoder for the member `key` (null when it is missing).
    func superDecoder(forKey key: Key) throws -> any Decoder { superDecoder(named: key) }

    private func superDecoder(named key: some CodingKey) -> any Decoder {
        let index = document.member(named: key.stringValue, in: object) ?? document.absentValue(at: codingPath + [key])
        return JSONTokenDecoder(document: document, index: index)
    }
}
