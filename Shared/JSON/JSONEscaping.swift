/// JSON string escaping in both directions (RFC 8259 §7), shared by the encoder and decoder.
enum JSONEscaping {
    /// The value of an ASCII hex digit, or nil.
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Appends `string` to `bytes` as a quoted JSON string, escaping only what JSON requires (the
    /// quote, the backslash and control characters), as Foundation's `JSONEncoder` does with
    /// `.withoutEscapingSlashes`. Returns whether nothing needed an escape.
    @discardableResult
    static func appendQuoted(_ string: String, to bytes: inout JSONByteBuffer) -> Bool {
        var string = string
        return string.withUTF8 { utf8 in
            bytes.append(UInt8(ascii: "\""))
            var isUnescaped = true
            var runStart = 0
            var offset = 0
            while offset < utf8.count, let base = utf8.baseAddress {
                // Eight bytes at a time, straight to the first one that needs an escape.
                let remaining = utf8.count - offset
                let word = loadWord(base + offset, available: remaining)
                let special = escapeMask(word)
                guard special != 0 else {
                    offset += Swift.min(8, remaining)
                    continue
                }
                offset += special.trailingZeroBitCount >> 3
                isUnescaped = false
                bytes.append(UnsafeBufferPointer(rebasing: utf8[runStart..<offset]))
                appendEscape(for: utf8[offset], to: &bytes)
                offset += 1
                runStart = offset
            }
            bytes.append(UnsafeBufferPointer(rebasing: utf8[runStart...]))
            bytes.append(UInt8(ascii: "\""))
            return isUnescaped
        }
    }

    private static let ones: UInt64 = 0x0101_0101_0101_0101
    /// The top bit of each of eight bytes.
    static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// The eight bytes at `pointer` as a little-endian word; when fewer are `available`, the
    /// rest read as spaces, which never need attention.
    static func loadWord(_ pointer: UnsafePointer<UInt8>, available: Int) -> UInt64 {
        if available >= 8 { return UInt64(littleEndian: UnsafeRawPointer(pointer).loadUnaligned(as: UInt64.self)) }
        var word: UInt64 = 0x2020_2020_2020_2020
        withUnsafeMutableBytes(of: &word) { $0.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: available)) }
        return UInt64(littleEndian: word)
    }

    /// A mask whose lowest set bit is the top bit of the first of the eight bytes of `word` (in
    /// memory order, read as little-endian) that is a quote, a backslash or a control
    /// character, or 0 if there is none. Uses the classic "has a zero byte" bit trick: a
    /// borrow only spreads towards later bytes, so the lowest set bit is exact. Bytes of 0x80
    /// and above never count.
    static func escapeMask(_ word: UInt64) -> UInt64 {
        func zeroBytes(_ value: UInt64) -> UInt64 { (value &- ones) & ~value & highBits }
        let quote = zeroBytes(word ^ (ones &* UInt64(UInt8(ascii: "\""))))
        let backslash = zeroBytes(word ^ (ones &* UInt64(UInt8(ascii: "\\"))))
        let control = (word &- ones &* 0x20) & ~word & highBits
        return quote | backslash | control
    }

    private static func appendEscape(for byte: UInt8, to bytes: inout JSONByteBuffer) {
        let short: UInt8
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): short = byte
        case 0x0A: short = UInt8(ascii: "n")
        case 0x0D: short = UInt8(ascii: "r")
        case 0x09: short = UInt8(ascii: "t")
        case 0x08: short = UInt8(ascii: "b")
        case 0x0C: short = UInt8(ascii: "f")
        default:
            let digits: StaticString = "0123456789abcdef"
            let hex = UnsafeBufferPointer(start: digits.utf8Start, count: 16)
            bytes.append("\\u00")
            bytes.append(hex[Int(byte >> 4)])
            bytes.append(hex[Int(byte & 0xF)])
            return
        }
        bytes.append(UInt8(ascii: "\\"))
        bytes.append(short)
    }

    /// The string that the escaped JSON string content `raw` (without quotes) stands for.
    ///
    /// `raw` has normally been validated by ``JSONScanner``; anything malformed that slips
    /// through becomes U+FFFD or is dropped, never a crash.
    static func unescape(_ raw: UnsafeBufferPointer<UInt8>) -> String {
        // Unescaping never lengthens: each escape is at least as long as what it stands for.
        String(unsafeUninitializedCapacity: raw.count) { output in
            var input = 0
            var written = 0
            func write(_ byte: UInt8) {
                output[written] = byte
                written += 1
            }
            while input < raw.count {
                let byte = raw[input]
                guard byte == UInt8(ascii: "\\"), input + 1 < raw.count else {
                    write(byte)
                    input += 1
                    continue
                }
                let escaped = raw[input + 1]
                input += 2
                switch escaped {
                case UInt8(ascii: "b"): write(0x08)
                case UInt8(ascii: "f"): write(0x0C)
                case UInt8(ascii: "n"): write(0x0A)
                case UInt8(ascii: "r"): write(0x0D)
                case UInt8(ascii: "t"): write(0x09)
                case UInt8(ascii: "u"):
                    guard let unit = hexQuad(raw, at: input) else { return written }
                    input += 4
                    var scalar = UInt32(unit)
                    if (0xD800...0xDBFF).contains(unit), input + 6 <= raw.count, raw[input] == UInt8(ascii: "\\"),
                        raw[input + 1] == UInt8(ascii: "u"), let low = hexQuad(raw, at: input + 2),
                        (0xDC00...0xDFFF).contains(low)
                    {
                        scalar = 0x10000 + (UInt32(unit - 0xD800) << 10) + UInt32(low - 0xDC00)
                        input += 6
                    }
                    let value = (Unicode.Scalar(scalar) ?? "\u{FFFD}").value
                    if value < 0x80 {
                        write(UInt8(value))
                    } else if value < 0x800 {
                        write(0xC0 | UInt8(value >> 6))
                        write(0x80 | UInt8(value & 0x3F))
                    } else if value < 0x10000 {
                        write(0xE0 | UInt8(value >> 12))
                        write(0x80 | UInt8(value >> 6 & 0x3F))
                        write(0x80 | UInt8(value & 0x3F))
                    } else {
                        write(0xF0 | UInt8(value >> 18))
                        write(0x80 | UInt8(value >> 12 & 0x3F))
                        write(0x80 | UInt8(value >> 6 & 0x3F))
                        write(0x80 | UInt8(value & 0x3F))
                    }
                default: write(escaped)
                }
            }
            return written
        }
    }

    private static func hexQuad(_ raw: UnsafeBufferPointer<UInt8>, at offset: Int) -> UInt16? {
        guard offset + 4 <= raw.count else { return nil }
        var value: UInt16 = 0
        for byte in raw[offset..<offset + 4] {
            guard let digit = hexValue(byte) else { return nil }
            value = value << 4 | UInt16(digit)
        }
        return value
    }
}
