/// One mailbox: an optional display name and the bare address the SMTP envelope uses, parsed
/// from `Storefront <no-reply@storefront.local>` or `no-reply@storefront.local`.
///
/// Only plain ASCII addresses (a dot-atom local part, a host-name domain) are accepted: no
/// quoted local parts, no address literals, no internationalized addresses (SMTPUTF8). The
/// display name may be any text without control characters; non-ASCII names are rendered as
/// RFC 2047 encoded-words. Carriage returns and line feeds are refused everywhere, so an
/// address can never inject a header or an SMTP command.
package struct MailAddress: Sendable, Hashable, CustomStringConvertible {
    /// The display name, e.g. `Storefront`; `nil` for a bare address.
    package let displayName: String?
    /// The bare address, e.g. `no-reply@storefront.local`: what `MAIL FROM` and `RCPT TO` carry.
    package let address: String

    /// Creates a mailbox from its parts after validating both.
    package init(displayName: String? = nil, address: String) throws(MailMessageError) {
        guard Self.isValid(address: address) else { throw .invalidAddress(address) }
        if let displayName {
            guard !displayName.unicodeScalars.contains(where: Self.isControl) else { throw .invalidAddress(displayName) }
        }
        let trimmed = displayName?.trimmingSpaces
        self.displayName = trimmed?.isEmpty == false ? trimmed : nil
        self.address = address
    }

    /// Parses `Display Name <local@domain>`, `"Quoted, Name" <local@domain>` or a bare
    /// `local@domain`.
    package init(parsing text: String) throws(MailMessageError) {
        guard !text.unicodeScalars.contains(where: Self.isControl) else { throw .invalidAddress(text) }
        let text = text.trimmingSpaces
        guard text.hasSuffix(">"), let open = text.lastIndex(of: "<") else {
            try self.init(address: text)
            return
        }
        let address = String(text[text.index(after: open)..<text.index(before: text.endIndex)])
        var name = String(text[..<open]).trimmingSpaces
        if name.count >= 2, name.hasPrefix("\""), name.hasSuffix("\"") {
            name = Self.unquote(name.dropFirst().dropLast())
        }
        try self.init(displayName: name, address: address)
    }

    /// The domain part of ``address``, e.g. `storefront.local`.
    package var domain: Substring {
        address[address.index(after: address.lastIndex(of: "@")!)...]
    }

    /// The mailbox as written in a header: the bare address, or `name <address>` with the
    /// name quoted or encoded as needed.
    package var description: String {
        guard let displayName else { return address }
        return "\(HeaderText.phrase(displayName)) <\(address)>"
    }

    /// Whether `address` is a dot-atom local part, `@`, and a host-name domain (RFC 5321 §4.1.2).
    static func isValid(address: String) -> Bool {
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, address.utf8.count <= 254 else { return false }
        let (local, domain) = (parts[0], parts[1])
        guard (1...64).contains(local.utf8.count), !domain.isEmpty else { return false }
        let localAtoms = local.split(separator: ".", omittingEmptySubsequences: false)
        guard localAtoms.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy(HeaderText.isAtomText) }) else { return false }
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        return labels.allSatisfy { label in
            (1...63).contains(label.utf8.count) && label.first != "-" && label.last != "-"
                && label.utf8.allSatisfy { isLetterOrDigit($0) || $0 == UInt8(ascii: "-") }
        }
    }

    private static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    /// C0 controls (CR and LF among them) and DEL; a tab is allowed.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        (scalar.value < 0x20 && scalar != "\t") || scalar.value == 0x7F
    }

    /// The content of a quoted string with its backslash escapes removed.
    private static func unquote(_ quoted: Substring) -> String {
        var result = ""
        var escaped = false
        for character in quoted {
            if !escaped, character == "\\" {
                escaped = true
                continue
            }
            escaped = false
            result.append(character)
        }
        return result
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
