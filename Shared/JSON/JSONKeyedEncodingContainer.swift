/// Writes the members of one object of a ``JSONByteWriter``.
///
/// Members are written as they come; the object sorts them by key when it closes. Nested
/// containers and super encoders get their own writer, so they may be filled in any order.
struct JSONKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    /// Where the object is written.
    let writer: JSONByteWriter
    /// The object's frame.
    let frame: JSONByteWriter.FrameHandle

    /// The path to the object.
    var codingPath: [any CodingKey] { writer.codingPath }

    /// Begins the member `key`, returning its key's offset.
    private func begin(_ key: Key, _ value: @autoclosure () -> Any) throws -> Int {
        guard let keyStart = writer.beginMember(key.stringValue, in: frame) else { throw writer.misuseError(value()) }
        return keyStart
    }

    private mutating func write(_ value: Int64, forKey key: Key) throws {
        _ = try begin(key, value)
        writer.writeInteger(value)
    }

    private mutating func write(_ value: UInt64, forKey key: Key) throws {
        _ = try begin(key, value)
        writer.writeInteger(value)
    }

    /// Writes `"key":null`.
    mutating func encodeNil(forKey key: Key) throws {
        _ = try begin(key, Never?.none as Any)
        writer.writeNull()
    }

    /// Writes a Boolean member.
    mutating func encode(_ value: Bool, forKey key: Key) throws {
        _ = try begin(key, value)
        writer.writeBool(value)
    }

    /// Writes a string member.
    mutating func encode(_ value: String, forKey key: Key) throws {
        _ = try begin(key, value)
        writer.writeString(value)
    }

    /// Writes a finite `Double` member.
    mutating func encode(_ value: Double, forKey key: Key) throws {
        guard value.isFinite else { throw writer.nonFiniteError(value, key: key) }
        _ = try begin(key, value)
        writer.writeDouble(value)
    }

    /// Writes a finite `Float` member.
    mutating func encode(_ value: Float, forKey key: Key) throws {
        guard value.isFinite else { throw writer.nonFiniteError(value, key: key) }
        _ = try begin(key, value)
        writer.writeFloat(value)
    }

    /// Writes an `Int` member.
    mutating func encode(_ value: Int, forKey key: Key) throws { try write(Int64(value), forKey: key) }
    /// Writes an `Int8` member.
    mutating func encode(_ value: Int8, forKey key: Key) throws { try write(Int64(value), forKey: key) }
    /// Writes an `Int16` member.
    mutating func encode(_ value: Int16, forKey key: Key) throws { try write(Int64(value), forKey: key) }
    /// Writes an `Int32` member.
    mutating func encode(_ value: Int32, forKey key: Key) throws { try write(Int64(value), forKey: key) }
    /// Writes an `Int64` member.
    mutating func encode(_ value: Int64, forKey key: Key) throws { try write(value, forKey: key) }
    /// Writes a `UInt` member.
    mutating func encode(_ value: UInt, forKey key: Key) throws { try write(UInt64(value), forKey: key) }
    /// Writes a `UInt8` member.
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try write(UInt64(value), forKey: key) }
    /// Writes a `UInt16` member.
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try write(UInt64(value), forKey: key) }
    /// Writes a `UInt32` member.
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try write(UInt64(value), forKey: key) }
    /// Writes a `UInt64` member.
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try write(value, forKey: key) }

    /// Writes any `Encodable` member.
    mutating func encode<Value: Encodable>(_ value: Value, forKey key: Key) throws {
        let checkpoint = writer.checkpoint()
        let keyStart = try begin(key, value)
        writer.path.append(keyStart)
        defer { writer.path.removeLast() }
        do {
            try writer.encodeValue(value)
        } catch {
            writer.rollBack(to: checkpoint)
            throw error
        }
    }

    /// An object member, written out of line.
    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let child = attachChild(key)
        return KeyedEncodingContainer(JSONKeyedEncodingContainer<NestedKey>(writer: child, frame: child.openFrame(isObject: true)))
    }

    /// An array member, written out of line.
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = attachChild(key)
        return JSONUnkeyedEncodingContainer(writer: child, frame: child.openFrame(isObject: false))
    }

    /// An encoder for the member `super`.
    mutating func superEncoder() -> any Encoder {
        JSONByteEncoder(writer: attachChild(JSONPathKey.superKey), depth: 0, start: 0)
    }

    /// An encoder for the member `key`.
    mutating func superEncoder(forKey key: Key) -> any Encoder {
        JSONByteEncoder(writer: attachChild(key), depth: 0, start: 0)
    }

    private func attachChild(_ key: some CodingKey) -> JSONByteWriter {
        writer.attach(JSONByteWriter(basePath: codingPath + [key]), key: key.stringValue, in: frame)
    }
}
