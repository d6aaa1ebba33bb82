/// One JSON value found by ``JSONScanner``: its kind, where its bytes are, and where it sits
/// in the tree. Tokens are stored in document order, so a container's members follow it and
/// its subtree ends at ``end``.
///
/// 24 bytes, so that a message's tokens fit in one small allocation.
struct JSONToken: Sendable {
    /// What kind of JSON value this is.
    enum Kind: UInt8, Sendable {
        /// `null`.
        case null
        /// `false`.
        case `false`
        /// `true`.
        case `true`
        /// A number; ``JSONToken/isIntegerLiteral`` tells whether it has a fraction or exponent.
        case number
        /// A string; its bytes exclude the quotes.
        case string
        /// An array; its elements follow it.
        case array
        /// An object; each member is a key token (a string) followed by the value's tokens.
        case object
    }

    /// Set on a string that contains a backslash escape.
    static let escapedFlag: UInt8 = 1
    /// Set on a string that contains a byte outside ASCII.
    static let nonASCIIFlag: UInt8 = 2
    /// Set on a number written without a fraction or an exponent.
    static let integerFlag: UInt8 = 4
    /// The parent index of the top-level value.
    static let noParent = UInt32.max

    /// The kind of value.
    var kind: Kind
    /// ``escapedFlag``, ``nonASCIIFlag`` and ``integerFlag``.
    var flags: UInt8
    /// For a scalar, the offset of its first byte (after the opening quote for a string); for
    /// a container, the offset of its bracket.
    var start: UInt32
    /// For a scalar, its length in bytes (without quotes); for a container, the index of the
    /// first token after its subtree.
    var extent: UInt32
    /// For a container, how many elements or members it has.
    var count: UInt32
    /// The index of the container holding this token, or ``noParent``.
    var parent: UInt32
    /// The element index in the parent array, or the member index in the parent object.
    var position: UInt32

    /// Whether a string needs unescaping or a key needs a String comparison.
    var needsSlowString: Bool { flags & (Self.escapedFlag | Self.nonASCIIFlag) != 0 }

    /// Whether a number has neither a fraction nor an exponent.
    var isIntegerLiteral: Bool { flags & Self.integerFlag != 0 }

    /// The byte range of a scalar.
    var byteRange: Range<Int> { Int(start)..<Int(start) + Int(extent) }
}

/// Why the bytes are not one JSON value, and where; the underlying cause of a
/// `MALFORMED_MESSAGE` decoding failure, for logs.
struct JSONSyntaxError: Error, Sendable, CustomStringConvertible {
    /// What was wrong.
    enum Problem: String, Sendable {
        /// The input ended inside a value.
        case unexpectedEnd = "unexpected end of input"
        /// A byte that cannot start a value.
        case unexpectedByte = "unexpected byte"
        /// A misspelt `true`, `false` or `null`.
        case invalidLiteral = "invalid literal"
        /// A number outside the JSON grammar (leading zero, missing digits, `+`).
        case invalidNumber = "invalid number"
        /// A backslash followed by something other than a JSON escape.
        case invalidEscape = "invalid escape sequence"
        /// A `\u` escape without four hex digits, or a surrogate without its partner.
        case invalidUnicodeEscape = "invalid \\u escape or lone surrogate"
        /// A raw byte below 0x20 inside a string.
        case controlCharacter = "unescaped control character in a string"
        /// Bytes that are not UTF-8.
        case invalidUTF8 = "invalid UTF-8"
        /// Something other than a string where an object key belongs.
        case expectedKey = "expected a string key"
        /// A key not followed by a colon.
        case expectedColon = "expected ':' after a key"
        /// A value not followed by a comma or the closing bracket.
        case expectedSeparator = "expected ',' or the end of the container"
        /// More than whitespace after the top-level value.
        case trailingBytes = "unexpected bytes after the value"
        /// Arrays and objects nested deeper than ``JSONScanner/maximumDepth``.
        case tooDeep = "nesting is too deep"
        /// Input of 4 GiB or more, whose offsets do not fit the tokens.
        case tooLarge = "input is too large"
    }

    /// What was wrong.
    var problem: Problem
    /// The byte offset where it was found.
    var offset: Int

    /// The problem and its offset, for logs.
    var description: String { "invalid JSON at byte \(offset): \(problem.rawValue)" }
}
