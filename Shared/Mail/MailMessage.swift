package import Foundation

/// A plain-text email to one recipient, validated when created so that rendering cannot
/// fail and no field can inject a header line or an SMTP command.
///
/// ``rendered()`` turns it into RFC 5322 text; a ``MailTransport`` delivers it. A value type,
/// safe to share between threads.
package struct MailMessage: Sendable, Hashable {
    /// The sender, e.g. `Storefront <no-reply@storefront.local>`; its bare address is the
    /// SMTP envelope sender.
    package let from: MailAddress
    /// The one recipient; its bare address is the SMTP envelope recipient.
    package let to: MailAddress
    /// The subject as written; sent as encoded-words when it is not plain ASCII.
    package let subject: String
    /// The plain-text body as given; any mix of CRLF, CR and LF line ends is sent as CRLF.
    package let body: String
    /// Extra headers, rendered after the standard ones in this order.
    package let headers: [MailHeader]
    /// The `Message-ID` without its angle brackets, e.g. `4f0c...@storefront.local`.
    ///
    /// Give a message that may be delivered again (from an outbox, after a crash) an id
    /// derived from its outbox row: receivers can then recognise the duplicate, and
    /// ``MailDirectoryTransport`` names its file after it, so the retry replaces the file.
    package let messageID: String
    /// The `Date` header; rendered in UTC.
    package let date: Date

    /// Creates a message from validated parts. Without `messageID`, a random one at the
    /// sender's domain is made.
    package init(
        from: MailAddress, to: MailAddress, subject: String, body: String, headers: [MailHeader] = [],
        messageID: String? = nil, date: Date = Date()
    ) throws(MailMessageError) {
        try MailHeader.checkValue(subject, of: "Subject")
        for (index, line) in Self.bodyLines(body).enumerated() {
            guard line.utf8.count <= 998 else { throw .bodyLineTooLong(line: index + 1) }
            guard !line.utf8.contains(0) else { throw .invalidBodyCharacter(line: index + 1) }
        }
        self.from = from
        self.to = to
        self.subject = subject
        self.body = body
        self.headers = headers
        self.messageID = try messageID.map(Self.validatedMessageID) ?? "\(UUID().uuidString.lowercased())@\(from.domain)"
        self.date = date
    }

    /// Creates a message from text, parsing both addresses (`Name <local@domain>` or a bare
    /// `local@domain`) and validating each extra header, e.g.
    /// `headers: [("X-Storefront-Kind", "verify-email")]`.
    package init(
        from: String, to: String, subject: String, body: String, headers: [(name: String, value: String)] = [],
        messageID: String? = nil, date: Date = Date()
    ) throws(MailMessageError) {
        var validHeaders: [MailHeader] = []
        for header in headers {
            validHeaders.append(try MailHeader(name: header.name, value: header.value))
        }
        try self.init(
            from: MailAddress(parsing: from), to: MailAddress(parsing: to), subject: subject, body: body,
            headers: validHeaders, messageID: messageID, date: date)
    }

    /// The body split at CRLF, CR or LF, without the empty piece after a final line end.
    static func bodyLines(_ body: String) -> [Substring] {
        var lines: [Substring] = []
        let bytes = body.utf8
        var start = bytes.startIndex
        var index = start
        while index != bytes.endIndex {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\n") else {
                index = bytes.index(after: index)
                continue
            }
            lines.append(body[start..<index])
            index = bytes.index(after: index)
            if byte == UInt8(ascii: "\r"), index != bytes.endIndex, bytes[index] == UInt8(ascii: "\n") {
                index = bytes.index(after: index)
            }
            start = index
        }
        if start != bytes.endIndex { lines.append(body[start...]) }
        return lines
    }

    /// `id` without surrounding angle brackets, if it is a valid `left@right` message id.
    private static func validatedMessageID(_ id: String) throws(MailMessageError) -> String {
        var bare = Substring(id)
        if bare.hasPrefix("<"), bare.hasSuffix(">") { bare = bare.dropFirst().dropLast() }
        let parts = bare.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, bare.utf8.count <= 250,
            bare.utf8.allSatisfy({ (33...126).contains($0) && $0 != UInt8(ascii: "<") && $0 != UInt8(ascii: ">") })
        else { throw .invalidMessageID(id) }
        return String(bare)
    }
}

/// An extra header of a ``MailMessage``, e.g. `X-Storefront-Kind: verify-email`; validated on
/// creation so it can neither break the header block nor replace a header the message sets.
package struct MailHeader: Sendable, Hashable {
    /// Header names ``MailMessage`` writes itself, lowercased.
    static let reservedNames: Set<String> = [
        "from", "to", "cc", "bcc", "subject", "date", "message-id", "mime-version", "content-type",
        "content-transfer-encoding",
    ]

    /// The field name, e.g. `X-Storefront-Kind`.
    package let name: String
    /// The unfolded value; non-ASCII text is encoded when rendered.
    package let value: String

    /// Creates a header after checking that the name is printable ASCII without `:` and not
    /// reserved, and that the value holds no control character other than tab.
    package init(name: String, value: String) throws(MailMessageError) {
        guard (1...76).contains(name.utf8.count), name.utf8.allSatisfy({ (33...126).contains($0) && $0 != UInt8(ascii: ":") })
        else { throw .invalidHeaderName(name) }
        guard !Self.reservedNames.contains(name.lowercased()) else { throw .reservedHeader(name) }
        try Self.checkValue(value, of: name)
        self.name = name
        self.value = value
    }

    /// Throws unless `value` is free of C0 controls other than tab and of DEL.
    static func checkValue(_ value: String, of name: String) throws(MailMessageError) {
        let forbidden = value.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }
        guard !forbidden else { throw .invalidHeaderValue(name: name) }
    }
}

/// Why a ``MailMessage`` (or one of its addresses or headers) could not be built. Thrown by
/// initializers, so a message that exists can always be rendered and sent.
package enum MailMessageError: Error, Hashable, CustomStringConvertible {
    /// Not a mailbox this package can send to or from (see ``MailAddress``).
    case invalidAddress(String)
    /// A header name outside RFC 5322's printable ASCII without `:`, or longer than 76.
    case invalidHeaderName(String)
    /// An extra header that the message renders itself (`From`, `Date`, `Content-Type`, ...).
    case reservedHeader(String)
    /// A header value (or the subject) containing a control character such as CR or LF.
    case invalidHeaderValue(name: String)
    /// A message id that is not `left@right` made of printable ASCII without `<`, `>` or spaces.
    case invalidMessageID(String)
    /// A body line (1-based) longer than RFC 5322's 998 octets, which 8bit transfer forbids.
    case bodyLineTooLong(line: Int)
    /// A body line (1-based) containing NUL, which 8bit transfer forbids.
    case invalidBodyCharacter(line: Int)

    /// A sentence for logs and error messages.
    package var description: String {
        switch self {
        case .invalidAddress(let text): "not a valid mail address: \(text.debugDescription)"
        case .invalidHeaderName(let name): "not a valid header name: \(name.debugDescription)"
        case .reservedHeader(let name): "\(name) is set by the message itself and cannot be an extra header"
        case .invalidHeaderValue(let name): "the \(name) header contains a line break or control character"
        case .invalidMessageID(let id): "not a valid message id: \(id.debugDescription)"
        case .bodyLineTooLong(let line): "body line \(line) is longer than 998 octets"
        case .invalidBodyCharacter(let line): "body line \(line) contains a NUL character"
        }
    }
}
