/// Lower-case hexadecimal digits, written and read through tables rather than comparisons:
/// the ids they spell are random, so a branch per digit on letter-or-decimal is mispredicted
/// about every third digit — and request ids and trace context are written and read on every
/// hop of every call.
enum HexDigits {
    /// The digit of each nibble.
    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Each byte's value as a lower-case digit, or 0xFF for a byte that is not one (so that one
    /// such byte among a number's sets the high bits ``value(of:_:)`` tests).
    private static let nibbles: [UInt8] = (0...255).map { byte in
        switch UInt8(byte) {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt8(byte) - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt8(byte) - UInt8(ascii: "a") + 10
        default: 0xFF
        }
    }

    /// Writes the low `count` nibbles of `value`, most significant first, into `buffer` from
    /// `start`; the caller gives a buffer with room for them.
    static func write(_ value: UInt64, count: Int, into buffer: UnsafeMutableBufferPointer<UInt8>, at start: Int) {
        precondition(start >= 0 && start + count <= buffer.count, "the digits must fit the buffer")
        for index in 0..<count {
            buffer[start + index] = digits[Int((value >> UInt64(4 * (count - 1 - index))) & 0xF)]
        }
    }

    /// The low `count` nibbles of `value` as a string of `count` digits, written straight into
    /// its storage.
    static func string(_ value: UInt64, count: Int) -> String {
        // Unsafe buffer, filled within `count` (write's precondition): ids are made on every call
        // without a copy, 15 digits inline (Benchmarks/profile-get-product gateway).
        String(unsafeUninitializedCapacity: count) { buffer in
            write(value, count: count, into: buffer, at: 0)
            return count
        }
    }

    /// The value of the digits at `range` of `bytes` (at most 16 of them), or nil when one is
    /// not a lower-case hexadecimal digit; `range` lies within `bytes`.
    static func value(of bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> UInt64? {
        precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count && range.count <= 16, "the digits must lie in the bytes")
        var value: UInt64 = 0
        var invalid: UInt8 = 0
        for index in range {
            let nibble = nibbles[Int(bytes[index])]
            invalid |= nibble
            value = value << 4 | UInt64(nibble & 0xF)
        }
        return invalid & 0xF0 == 0 ? value : nil
    }
}
