/// One SMTP reply (RFC 5321 §4.2): a three-digit code and the text of each of its lines.
struct SMTPReply: Sendable, Hashable, CustomStringConvertible {
    /// The reply code, 200...599.
    let code: Int
    /// The text after the code on each line, in order; one entry for a single-line reply.
    let lines: [String]

    /// 4xx or 5xx: the server refused.
    var isNegative: Bool { (400...599).contains(code) }

    /// The reply as the server wrote it, its lines joined by ` / `, for error details.
    var description: String {
        lines.map { "\(code) \($0)" }.joined(separator: " / ")
    }
}

/// Collects bytes from an SMTP server and cuts them into replies, joining the lines of a
/// multi-line reply (`250-first`, `250-second`, `250 last`). A value type with no I/O, so
/// the parsing is testable on its own; one per connection.
struct SMTPReplyParser {
    /// The longest reply line accepted, well above RFC 5321 §4.5.3.1.5's 512 octets; a longer
    /// one means the peer is not speaking SMTP and must not make the buffer grow forever.
    static let longestLine = 4096

    private var buffer: [UInt8] = []
    private var lines: [String] = []
    private var code: Int?

    /// Adds bytes as they arrived from the connection.
    mutating func append(_ bytes: [UInt8]) {
        buffer += bytes
    }

    /// The next complete reply, or `nil` when more bytes are needed. Throws
    /// ``MailDeliveryError/Reason/unexpectedReply`` on text that is not an SMTP reply.
    mutating func nextReply() throws(MailDeliveryError) -> SMTPReply? {
        while let end = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            var line = buffer[..<end]
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            buffer.removeSubrange(...end)
            if let reply = try take(Array(line)) { return reply }
        }
        guard buffer.count <= Self.longestLine else {
            throw MailDeliveryError(.unexpectedReply, detail: "a reply line longer than \(Self.longestLine) bytes")
        }
        return nil
    }

    /// Adds one line to the reply being built; returns the reply when this was its last line.
    private mutating func take(_ line: [UInt8]) throws(MailDeliveryError) -> SMTPReply? {
        let text = String(decoding: line, as: UTF8.self)
        guard line.count >= 3, line.prefix(3).allSatisfy({ (0x30...0x39).contains($0) }),
            let lineCode = Int(String(decoding: line.prefix(3), as: UTF8.self)), (200...599).contains(lineCode)
        else {
            throw MailDeliveryError(.unexpectedReply, detail: "not an SMTP reply: \(text.debugDescription)")
        }
        if let code, code != lineCode {
            throw MailDeliveryError(.unexpectedReply, detail: "reply code changed from \(code) to \(lineCode) within a reply")
        }
        let separator = line.count > 3 ? line[3] : UInt8(ascii: " ")
        guard separator == UInt8(ascii: " ") || separator == UInt8(ascii: "-") else {
            throw MailDeliveryError(.unexpectedReply, detail: "not an SMTP reply: \(text.debugDescription)")
        }
        code = lineCode
        lines.append(String(decoding: line.dropFirst(4), as: UTF8.self))
        guard separator == UInt8(ascii: " ") else { return nil }  // "-" continues the reply
        let reply = SMTPReply(code: lineCode, lines: lines)
        code = nil
        lines = []
        return reply
    }
}
