/// Reads the elements of one array of a ``JSONDocument`` in order. A failed read does not
/// advance, as with Foundation's `JSONDecoder`.
struct JSONUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    /// The message being decoded.
    let document: JSONDocument
    /// The token of the array.
    let array: Int
    /// The number of elements.
    let elementCount: Int
    /// The index of the next element to read.
    private(set) var currentIndex = 0
    /// The token of the next element.
    private var cursor: Int

    /// Reads the array at `array`; anything else is a type mismatch (or `valueNotFound` for null).
    init(document: JSONDocument, array: Int) throws {
        guard document.token(array).kind == .array else { throw document.mismatch([Any].self, at: array) }
        self.document = document
        self.array = array
        self.elementCount = Int(document.tokens[array].count)
        self.cursor = array + 1
    }

    /// The path to the array.
    var codingPath: [any CodingKey] { document.codingPath(of: array) }
    /// The number of elements.
    var count: Int? { elementCount }
    /// Whether every element has been read.
    var isAtEnd: Bool { currentIndex >= elementCount }

    /// The token of the next element; throws `valueNotFound` when there is none.
    private func nextIndex(_ type: Any.Type) throws -> Int {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type,
                DecodingError.Context(
                    codingPath: codingPath + [JSONPathKey(index: currentIndex)], debugDescription: "The array has no more elements."))
        }
        return cursor
    }

    /// Moves past the element just read and returns what was read from it.
    private mutating func advance<Value>(past value: Value) -> Value {
        cursor = document.subtreeEnd(cursor)
        currentIndex += 1
        return value
    }

    /// Whether the next element is null; it is consumed only if so.
    mutating func decodeNil() throws -> Bool {
        guard document.tokens[try nextIndex(Never?.self)].kind == .null else { return false }
        return advance(past: true)
    }

    /// The next element as a Boolean.
    mutating func decode(_ type: Bool.Type) throws -> Bool { try advance(past: document.decodeBool(at: nextIndex(type))) }
    /// The next element as a string.
    mutating func decode(_ type: String.Type) throws -> String { try advance(past: document.decodeString(at: nextIndex(type))) }
    /// The next element as a `Double`.
    mutating func decode(_ type: Double.Type) throws -> Double { try advance(past: document.decodeDouble(at: nextIndex(type))) }
    /// The next element as a `Float`.
    mutating func decode(_ type: Float.Type) throws -> Float { try advance(past: document.decodeFloat(at: nextIndex(type))) }
    /// The next element as an `Int`.
    mutating func decode(_ type: Int.Type) throws -> Int { try advance(past: document.decodeInteger(type, at: nextIndex(type))) }
    /// The next element as an `Int8`.
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try advance(past: document.decodeInteger(type, at: nextIndex(type))) }
    /// The next element as an `Int16`.
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try advance(past: document.decodeInteger(type, at: nextIndex(type))) }
    /// The next element as an `Int32`.
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try advance(past: document.decodeInteger(type, at: nextIndex(type))) }
    /// The next element as an `Int64`.
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try advance(past: document.decodeInteger(type, at: nextIndex(type))) }
    /// The next element as a `UInt`.
    mutating func decode(_ type: UInt.Type) throws -> UInt { try advance(past: document.decodeInteger(type, at: nextIndex(type))) }
    /// The next element as a `UInt8`.
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try advance(past: document.decodeInteger(type, at: nextIndex(type))) }
    /// The next element as a `UInt16`.
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try advance(past: document.decodeInteger(type, at: nextIndex(type))) }
    /// The next element as a `UInt32`.
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try advance(past: document.decodeInteger(type, at: nextIndex(type))) }
    /// The next element as a `UInt64`.
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try advance(past: document.decodeInteger(type, at: nextIndex(type))) }
    /// The next element as any `Decodable`.
    mutating func decode<Value: Decodable>(_ type: Value.Type) throws -> Value {
        try advance(past: document.decodeValue(type, at: nextIndex(type)))
    }

    /// The next element as an object.
    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        let index = try nextIndex(KeyedDecodingContainer<NestedKey>.self)
        return advance(past: KeyedDecodingContainer(try JSONKeyedDecodingContainer<NestedKey>(document: document, object: index)))
    }

    /// The next element as an array.
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let index = try nextIndex((any UnkeyedDecodingContainer).self)
        return advance(past: try JSONUnkeyedDecodingContainer(document: document, array: index))
    }

    /// A decoder for the next element.
    mutating func superDecoder() throws -> any Decoder {
        advance(past: JSONTokenDecoder(document: document, index: try nextIndex((any Decoder).self)))
    }
}
