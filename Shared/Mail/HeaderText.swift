internal import Foundation

/// How header values become header lines: RFC 2047 encoded-words for text that is not plain
/// ASCII, quoted strings for display names with specials, and folding (RFC 5322 §2.2.3) so
/// lines stay near 78 characters.
enum HeaderText {
    /// Lines are folded once they would pass this length (RFC 5322 §2.1.1 "SHOULD").
    static let preferredLineLength = 78

    /// A word longer than this is sent as encoded-words, which can be folded, rather than
    /// risking the 998-octet hard limit.
    static let longestPlainWord = 900

    /// UTF-8 bytes per encoded-word: 39 bytes are 52 base64 characters, so one word is 64
    /// characters and a folded line holding it stays under the 76 RFC 2047 §2 allows.
    static let bytesPerEncodedWord = 39

    /// The complete header line `name: value`, folded, without the final CRLF.
    static func line(name: String, value: String) -> String {
        var lines: [String] = []
        var current = "\(name):"
        for token in value.split(separator: " ", omittingEmptySubsequences: false) {
            if !token.isEmpty, current.utf8.count + 1 + token.utf8.count > preferredLineLength,
                current.contains(where: { $0 != " " && $0 != "\t" })
            {
                lines.append(current)
                current = " \(token)"
            } else {
                current += " \(token)"
            }
        }
        lines.append(current)
        return lines.joined(separator: "\r\n")
    }

    /// An unstructured value (`Subject`, extra headers): as written when it is plain ASCII,
    /// otherwise encoded-words.
    static func unstructured(_ value: String) -> String {
        needsEncoding(value) ? encodedWords(value) : value
    }

    /// A display name as an RFC 5322 phrase: atoms as written, other ASCII as a quoted
    /// string, anything else as encoded-words.
    static func phrase(_ name: String) -> String {
        if needsEncoding(name) { return encodedWords(name) }
        if name.utf8.allSatisfy({ isAtomText($0) || $0 == UInt8(ascii: " ") }) { return name }
        var quoted = "\""
        for character in name {
            if character == "\"" || character == "\\" { quoted.append("\\") }
            quoted.append(character)
        }
        return quoted + "\""
    }

    /// `value` as space-separated `=?UTF-8?B?...?=` words, split between Unicode scalars
    /// because RFC 2047 §5 forbids splitting a character across words.
    static func encodedWords(_ value: String) -> String {
        var words: [String] = []
        var chunk: [UInt8] = []
        for scalar in value.unicodeScalars {
            let bytes = Array(String(scalar).utf8)
            if chunk.count + bytes.count > bytesPerEncodedWord {
                words.append(encodedWord(chunk))
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty || words.isEmpty { words.append(encodedWord(chunk)) }
        return words.joined(separator: " ")
    }

    /// Whether a value cannot go out as written: non-ASCII, text a reader would take for an
    /// encoded-word, or a word too long to fold.
    private static func needsEncoding(_ value: String) -> Bool {
        !value.utf8.allSatisfy { $0 < 0x80 } || value.contains("=?")
            || value.split(separator: " ").contains { $0.utf8.count > longestPlainWord }
    }

    private static func encodedWord(_ bytes: [UInt8]) -> String {
        "=?UTF-8?B?\(Data(bytes).base64EncodedString())?="
    }

    /// `atext` of RFC 5322 §3.2.3: letters, digits and ``!#$%&'*+-/=?^_`{|}~``.
    static func isAtomText(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-/=?^_`{|}~".utf8.contains(byte)
        }
    }
}
