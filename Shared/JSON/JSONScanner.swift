/// Checks UTF-8 bytes against the JSON grammar (RFC 8259) in one pass and records every value
/// as a ``JSONToken``, so decoding never has to look at the grammar again.
///
/// Iterative, so hostile nesting cannot exhaust the stack; nesting deeper than
/// ``maximumDepth`` is rejected. Strings are checked completely here (escapes, surrogate
/// pairs, control characters, UTF-8), numbers only for their grammar.
struct JSONScanner {
    /// The deepest nesting of arrays and objects accepted; our messages need far less.
    static let maximumDepth = 64

    /// The input; valid only during ``scan(_:)``.
    let bytes: UnsafeBufferPointer<UInt8>
    /// The offset of the next byte to read.
    var index = 0
    /// The tokens found so far.
    var tokens: [JSONToken] = []

    private init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// The tokens of `bytes`, which must hold exactly one JSON value, optionally preceded by a
    /// UTF-8 byte order mark and surrounded by whitespace.
    static func scan(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONSyntaxError) -> [JSONToken] {
        var scanner = JSONScanner(bytes: bytes)
        try scanner.scanDocument()
        return scanner.tokens
    }

    private mutating func scanDocument() throws(JSONSyntaxError) {
        guard bytes.count < Int(UInt32.max) else { throw failure(.tooLarge) }
        tokens.reserveCapacity(min(bytes.count / 8 + 4, 4096))
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
        var container = -1
        var depth = 0
        while true {
            skipWhitespace()
            guard index < bytes.count else { throw failure(.unexpectedEnd) }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                guard depth <= Self.maximumDepth else { throw failure(.tooDeep) }
                let isObject = byte == UInt8(ascii: "{")
                let opened = append(isObject ? .object : .array, start: index, extent: 0, parent: container)
                index += 1
                skipWhitespace()
                // "}" and "]" are two code points after "{" and "[".
                if index < bytes.count, bytes[index] == byte + 2 {
                    index += 1
                    tokens[opened].extent = UInt32(tokens.count)
                    depth -= 1
                } else {
                    container = opened
                    if isObject { try scanKey(in: opened) }
                    continue
                }
            case UInt8(ascii: "\""):
                try scanString(parent: container)
            case UInt8(ascii: "t"):
                try scanLiteral("true", .true, parent: container)
            case UInt8(ascii: "f"):
                try scanLiteral("false", .false, parent: container)
            case UInt8(ascii: "n"):
                try scanLiteral("null", .null, parent: container)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                try scanNumber(parent: container)
            default:
                throw failure(.unexpectedByte)
            }
            // A value is complete: close containers until one expects another value.
            while true {
                skipWhitespace()
                guard container >= 0 else {
                    guard index == bytes.count else { throw failure(.trailingBytes) }
                    return
                }
                guard index < bytes.count else { throw failure(.unexpectedEnd) }
                let isObject = tokens[container].kind == .object
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    if isObject {
                        skipWhitespace()
                        try scanKey(in: container)
                    }
                    break
                }
                guard bytes[index] == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) else {
                    throw failure(.expectedSeparator)
                }
                index += 1
                tokens[container].extent = UInt32(tokens.count)
                let parent = tokens[container].parent
                container = parent == JSONToken.noParent ? -1 : Int(parent)
                depth -= 1
            }
        }
    }

    /// Appends a token, numbering it within its parent, and returns its index.
    @discardableResult
    mutating func append(
        _ kind: JSONToken.Kind, start: Int, extent: Int, flags: UInt8 = 0, parent: Int
    ) -> Int {
        var position: UInt32 = 0
        if parent >= 0 {
            if tokens[parent].kind == .array {
                position = tokens[parent].count
                tokens[parent].count += 1
            } else {
                // Object members were counted when their key was scanned.
                position = tokens[parent].count &- 1
            }
        }
        tokens.append(
            JSONToken(
                kind: kind, flags: flags, start: UInt32(truncatingIfNeeded: start),
                extent: UInt32(truncatingIfNeeded: extent), count: 0,
                parent: parent >= 0 ? UInt32(truncatingIfNeeded: parent) : JSONToken.noParent,
                position: position))
        return tokens.count - 1
    }

    /// Scans `"key"` and the colon after it.
    private mutating func scanKey(in object: Int) throws(JSONSyntaxError) {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw failure(.expectedKey) }
        tokens[object].count += 1
        try scanString(parent: object)
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure(.expectedColon) }
        index += 1
    }

    private mutating func scanLiteral(
        _ literal: StaticString, _ kind: JSONToken.Kind, parent: Int
    ) throws(JSONSyntaxError) {
        let length = literal.utf8CodeUnitCount
        guard index + length <= bytes.count else { throw failure(.invalidLiteral) }
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: length)
        for offset in 0..<length where bytes[index + offset] != expected[offset] {
            throw failure(.invalidLiteral)
        }
        append(kind, start: index, extent: length, parent: parent)
        index += length
    }

    private mutating func scanNumber(parent: Int) throws(JSONSyntaxError) {
        let start = index
        var flags = JSONToken.integerFlag
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard isDigit(at: index) else { throw failure(.invalidNumber) }
        if bytes[index] == UInt8(ascii: "0") { index += 1 } else { skipDigits() }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard isDigit(at: index) else { throw failure(.invalidNumber) }
            skipDigits()
            flags = 0
        }
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard isDigit(at: index) else { throw failure(.invalidNumber) }
            skipDigits()
            flags = 0
        }
        append(.number, start: start, extent: index - start, flags: flags, parent: parent)
    }

    private func isDigit(at offset: Int) -> Bool {
        offset < bytes.count && bytes[offset] &- UInt8(ascii: "0") < 10
    }

    private mutating func skipDigits() {
        while isDigit(at: index) { index += 1 }
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    /// The error for a problem at the current offset.
    func failure(_ problem: JSONSyntaxError.Problem) -> JSONSyntaxError {
        JSONSyntaxError(problem: problem, offset: index)
    }
}
