extension JSONScanner {
    /// Scans a string starting at its opening quote and appends its token. Rejects raw control
    /// characters, unknown escapes, lone surrogates and invalid UTF-8
    /// (RFC 8259 §7 and §8.2).
    mutating func scanString(parent: Int) throws(JSONSyntaxError) {
        index += 1
        let start = index
        var flags: UInt8 = 0
        guard let base = bytes.baseAddress else { throw failure(.unexpectedEnd) }
        let count = bytes.count
        scanning: while true {
            // Most string bytes are plain ASCII: step over them eight at a time, straight to the
            // first byte that needs a look.
            let remaining = count - index
            guard remaining > 0 else { throw failure(.unexpectedEnd) }
            let word = JSONEscaping.loadWord(base + index, available: remaining)
            let attention = JSONEscaping.escapeMask(word) | (word & JSONEscaping.highBits)
            guard attention != 0 else {
                index += Swift.min(8, remaining)
                continue
            }
            index += attention.trailingZeroBitCount >> 3
            switch bytes[index] {
            case UInt8(ascii: "\""):
                break scanning
            case UInt8(ascii: "\\"):
                flags |= JSONToken.escapedFlag
                try scanEscape()
            case 0..<0x20:
                throw failure(.controlCharacter)
            case 0x80...:
                flags |= JSONToken.nonASCIIFlag
                try scanUTF8Scalar()
            default:
                index += 1
            }
        }
        append(.string, start: start, extent: index - start, flags: flags, parent: parent)
        index += 1
    }

    /// Scans one escape sequence starting at its backslash.
    private mutating func scanEscape() throws(JSONSyntaxError) {
        guard index + 1 < bytes.count else { throw failure(.unexpectedEnd) }
        switch bytes[index + 1] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            index += 2
        case UInt8(ascii: "u"):
            let unit = try hexQuad(at: index + 2)
            index += 6
            if (0xD800...0xDBFF).contains(unit) {
                // A high surrogate must be followed by an escaped low surrogate.
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                    bytes[index + 1] == UInt8(ascii: "u")
                else { throw failure(.invalidUnicodeEscape) }
                let low = try hexQuad(at: index + 2)
                guard (0xDC00...0xDFFF).contains(low) else { throw failure(.invalidUnicodeEscape) }
                index += 6
            } else if (0xDC00...0xDFFF).contains(unit) {
                throw failure(.invalidUnicodeEscape)
            }
        default:
            throw failure(.invalidEscape)
        }
    }

    /// The value of the four hex digits at `offset`.
    private func hexQuad(at offset: Int) throws(JSONSyntaxError) -> UInt16 {
        guard offset + 4 <= bytes.count else { throw failure(.unexpectedEnd) }
        var value: UInt16 = 0
        for byte in bytes[offset..<offset + 4] {
            guard let digit = JSONEscaping.hexValue(byte) else { throw failure(.invalidUnicodeEscape) }
            value = value << 4 | UInt16(digit)
        }
        return value
    }

    /// Checks one multi-byte UTF-8 sequence: no overlong forms, no surrogates, nothing above
    /// U+10FFFF (RFC 3629 §4).
    private mutating func scanUTF8Scalar() throws(JSONSyntaxError) {
        let length: Int
        var second: ClosedRange<UInt8> = 0x80...0xBF
        switch bytes[index] {
        case 0xC2...0xDF: length = 2
        case 0xE0: (length, second) = (3, 0xA0...0xBF)
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: (length, second) = (3, 0x80...0x9F)
        case 0xF0: (length, second) = (4, 0x90...0xBF)
        case 0xF1...0xF3: length = 4
        case 0xF4: (length, second) = (4, 0x80...0x8F)
        default: throw failure(.invalidUTF8)
        }
        guard index + length <= bytes.count, second.contains(bytes[index + 1]) else {
            throw failure(.invalidUTF8)
        }
        for offset in 2..<length where bytes[index + offset] & 0xC0 != 0x80 {
            throw failure(.invalidUTF8)
        }
        index += length
    }
}
