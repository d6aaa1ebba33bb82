/// Writes the elements of one array of a ``JSONByteWriter``, in order. Nested containers and
/// super encoders get their own writer, so they may be filled in any order.
struct JSONUnkeyedEncodingContainer: UnkeyedEncodingContainer, IntegerEncoding {
    /// Where the array is written.
    let writer: JSONByteWriter
    /// The array's frame.
    let frame: JSONByteWriter.FrameHandle

    /// The path to the array.
    var codingPath: [any CodingKey] { writer.codingPath }

    /// The number of elements written.
    var count: Int { writer.count(of: frame) }

    /// Begins an element, returning its index.
    private func begin(_ value: @autoclosure () -> Any) throws -> Int {
        guard let index = writer.beginElement(in: frame) else { throw writer.misuseError(value()) }
        return index
    }

    mutating func write(_ value: Int64) throws {
        _ = try begin(value)
        writer.writeInteger(value)
    }

    mutating func write(_ value: UInt64) throws {
        _ = try begin(value)
        writer.writeInteger(value)
    }

    private func nonFiniteError(_ value: Any) -> EncodingError {
        writer.nonFiniteError(value, key: JSONPathKey(index: count))
    }

    /// Writes `null`.
    mutating func encodeNil() throws {
        _ = try begin(Never?.none as Any)
        writer.writeNull()
    }

    /// Writes a Boolean.
    mutating func encode(_ value: Bool) throws {
        _ = try begin(value)
        writer.writeBool(value)
    }

    /// Writes a string.
    mutating func encode(_ value: String) throws {
        _ = try begin(value)
        writer.writeString(value)
    }

    /// Writes a finite `Double`.
    mutating func encode(_ value: Double) throws {
        guard value.isFinite else { throw nonFiniteError(value) }
        _ = try begin(value)
        writer.writeDouble(value)
    }

    /// Writes a finite `Float`.
    mutating func encode(_ value: Float) throws {
        guard value.isFinite else { throw nonFiniteError(value) }
        _ = try begin(value)
        writer.writeFloat(value)
    }


    /// Writes any `Encodable`.
    mutating func encode<Value: Encodable>(_ value: Value) throws {
        let checkpoint = writer.checkpoint()
        let index = try begin(value)
        writer.path.append(-1 - index)
        defer { writer.path.removeLast() }
        do {
            try writer.encodeValue(value)
        } catch {
            writer.rollBack(to: checkpoint)
            throw error
        }
    }

    /// An object element, written out of line.
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let child = attachChild()
        return KeyedEncodingContainer(JSONKeyedEncodingContainer<NestedKey>(writer: child, frame: child.openFrame(isObject: true)))
    }

    /// An array element, written out of line.
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let child = attachChild()
        return JSONUnkeyedEncodingContainer(writer: child, frame: child.openFrame(isObject: false))
    }

    /// An encoder for the next element.
    mutating func superEncoder() -> any Encoder {
        JSONByteEncoder(writer: attachChild(), depth: 0, start: 0)
    }

    private func attachChild() -> JSONByteWriter {
        writer.attach(JSONByteWriter(basePath: codingPath + [JSONPathKey(index: count)]), key: nil, in: frame)
    }
}

/// The integer `encode` overloads that single-value and unkeyed containers must both offer,
/// written once: every width goes through a 64-bit signed or unsigned `write`.
protocol IntegerEncoding {
    /// Writes a signed integer.
    mutating func write(_ value: Int64) throws
    /// Writes an unsigned integer.
    mutating func write(_ value: UInt64) throws
}

extension IntegerEncoding {
    /// Writes an `Int`.
    mutating func encode(_ value: Int) throws { try write(Int64(value)) }
    /// Writes an `Int8`.
    mutating func encode(_ value: Int8) throws { try write(Int64(value)) }
    /// Writes an `Int16`.
    mutating func encode(_ value: Int16) throws { try write(Int64(value)) }
    /// Writes an `Int32`.
    mutating func encode(_ value: Int32) throws { try write(Int64(value)) }
    /// Writes an `Int64`.
    mutating func encode(_ value: Int64) throws { try write(value) }
    /// Writes a `UInt`.
    mutating func encode(_ value: UInt) throws { try write(UInt64(value)) }
    /// Writes a `UInt8`.
    mutating func encode(_ value: UInt8) throws { try write(UInt64(value)) }
    /// Writes a `UInt16`.
    mutating func encode(_ value: UInt16) throws { try write(UInt64(value)) }
    /// Writes a `UInt32`.
    mutating func encode(_ value: UInt32) throws { try write(UInt64(value)) }
    /// Writes a `UInt64`.
    mutating func encode(_ value: UInt64) throws { try write(value) }
}
