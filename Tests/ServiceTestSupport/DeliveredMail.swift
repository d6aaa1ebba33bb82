import Foundation

/// One email auth-svc wrote into `<data-dir>/mail/` as an `.eml` file (RFC 5322), parsed as
/// far as the tests need: headers, the decoded text body, and the token it carries.
package struct DeliveredMail: Sendable, CustomStringConvertible {
    /// What an email is for, from its `X-Storefront-Kind` header (auth-svc README, "Mail").
    package enum Kind: String, Sendable {
        /// A link that verifies the address.
        case verifyEmail = "verify-email"
        /// A link that resets the password.
        case resetPassword = "reset-password"
    }

    /// The file name, `<UTC timestamp>-<outbox id>.eml`.
    package let fileName: String
    /// The header fields in order, unfolded, names as written.
    package let headers: [(name: String, value: String)]
    /// The body, with any quoted-printable or base64 transfer encoding undone.
    package let body: String

    /// Parses the text of an `.eml` file.
    package init(fileName: String, text: String) {
        self.fileName = fileName
        let normalized = text.replacingOccurrences(of: "\r\n", with: "\n")
        let parts = normalized.components(separatedBy: "\n\n")
        var headers: [(name: String, value: String)] = []
        for line in parts[0].split(separator: "\n", omittingEmptySubsequences: false) {
            if line.first == " " || line.first == "\t", let last = headers.popLast() {
                // A folded header continues the previous one (RFC 5322 §2.2.3).
                headers.append((last.name, last.value + " " + line.trimmingCharacters(in: .whitespaces)))
            } else if let colon = line.firstIndex(of: ":") {
                let name = String(line[..<colon]).trimmingCharacters(in: .whitespaces)
                headers.append((name, String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)))
            }
        }
        self.headers = headers
        let rawBody = parts.dropFirst().joined(separator: "\n\n")
        let encoding = headers.first { $0.name.lowercased() == "content-transfer-encoding" }?.value.lowercased()
        switch encoding {
        case "quoted-printable": body = Self.decodeQuotedPrintable(rawBody)
        case "base64":
            let compact = rawBody.filter { !$0.isWhitespace }
            body = Data(base64Encoded: compact).map { String(decoding: $0, as: UTF8.self) } ?? rawBody
        default: body = rawBody
        }
    }

    /// The first value of the header `name` (case-insensitive).
    package func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The kind named by `X-Storefront-Kind`, if it is one the tests know.
    package var kind: Kind? { header("X-Storefront-Kind").flatMap(Kind.init(rawValue:)) }

    /// Whether the `To` header names `address` (compared case-insensitively).
    package func isAddressed(to address: String) -> Bool {
        header("To")?.lowercased().contains(address.lowercased()) ?? false
    }

    /// The token on the body's `Token: <token>` line.
    package var token: String? {
        for line in body.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("Token:") {
                let token = trimmed.dropFirst("Token:".count).trimmingCharacters(in: .whitespaces)
                return token.isEmpty ? nil : token
            }
        }
        return nil
    }

    package var description: String { "\(fileName) [\(header("X-Storefront-Kind") ?? "?") to \(header("To") ?? "?")]" }

    /// The order in which mails were written: by timestamp, then by numeric outbox id.
    package static func writtenBefore(_ first: DeliveredMail, _ second: DeliveredMail) -> Bool {
        func key(_ name: String) -> (String, Int?, String) {
            let stem = name.hasSuffix(".eml") ? String(name.dropLast(4)) : name
            guard let dash = stem.lastIndex(of: "-") else { return (stem, nil, stem) }
            let id = String(stem[stem.index(after: dash)...])
            return (String(stem[..<dash]), Int(id), id)
        }
        let (a, b) = (key(first.fileName), key(second.fileName))
        if a.0 != b.0 { return a.0 < b.0 }
        if let left = a.1, let right = b.1 { return left < right }
        return a.2 < b.2
    }

    /// Undoes quoted-printable encoding (RFC 2045 §6.7): soft line breaks and `=XX` escapes.
    private static func decodeQuotedPrintable(_ text: String) -> String {
        let bytes = Array(text.replacingOccurrences(of: "=\n", with: "").utf8)
        var output: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "="), index + 2 < bytes.count,
                let value = UInt8(String(decoding: bytes[(index + 1)...(index + 2)], as: UTF8.self), radix: 16)
            {
                output.append(value)
                index += 3
            } else {
                output.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
