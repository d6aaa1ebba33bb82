import Foundation
import Testing

@testable import Mail

/// Rendering a message as RFC 5322 text.
@Suite("Rendering a message")
struct MailMessageTests {
    /// 2026-05-05 16:53:20 UTC, a Tuesday.
    static let date = Date(timeIntervalSince1970: 1_778_000_000)

    /// A verification mail with a fixed id and date; the rest as given.
    static func message(
        subject: String = "Confirm your email", body: String = "Hello\nWorld\n", headers: [(name: String, value: String)] = []
    ) throws -> MailMessage {
        try MailMessage(
            from: "Storefront <no-reply@storefront.local>", to: "ada@example.com", subject: subject, body: body,
            headers: headers, messageID: "outbox-42@storefront.local", date: date)
    }

    @Test("a message renders its headers in order, a blank line and the body, all with CRLF")
    func fullRendering() throws {
        let message = try Self.message(headers: [("X-Storefront-Kind", "verify-email")])
        #expect(
            message.rendered() == """
                From: Storefront <no-reply@storefront.local>\r
                To: ada@example.com\r
                Subject: Confirm your email\r
                Date: Tue, 05 May 2026 16:53:20 +0000\r
                Message-ID: <outbox-42@storefront.local>\r
                MIME-Version: 1.0\r
                Content-Type: text/plain; charset=utf-8\r
                Content-Transfer-Encoding: 8bit\r
                X-Storefront-Kind: verify-email\r
                \r
                Hello\r
                World\r

                """)
    }

    @Test("mixed line ends in the body all become CRLF and the message ends with one")
    func lineEndsNormalized() throws {
        let rendered = try Self.message(body: "one\r\ntwo\nthree\rfour").rendered()
        #expect(rendered.hasSuffix("\r\n\r\none\r\ntwo\r\nthree\r\nfour\r\n"))
        let bytes = Array(rendered.utf8)
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") {
            #expect(index > 0 && bytes[index - 1] == UInt8(ascii: "\r"))
        }
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "\r") {
            #expect(index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "\n"))
        }
    }

    @Test("lines starting with a dot are rendered as written; stuffing is the SMTP transport's job")
    func dotLinesUnchanged() throws {
        let rendered = try Self.message(body: ".\n.hidden\n..two").rendered()
        #expect(rendered.hasSuffix("\r\n\r\n.\r\n.hidden\r\n..two\r\n"))
    }

    @Test("a non-ASCII subject becomes UTF-8 encoded-words that decode to the original")
    func encodedSubject() throws {
        let subject = "Bestätigen Sie Ihre E-Mail-Adresse für Storefront — 確認してください 🛒"
        let line = try #require(Self.headerLine("Subject", in: try Self.message(subject: subject).rendered()))
        #expect(line.hasPrefix("Subject:"))
        #expect(line.utf8.allSatisfy { $0 < 0x80 })
        for physical in line.components(separatedBy: "\r\n") {
            #expect(physical.utf8.count <= 76, "RFC 2047 §2 limits lines with encoded-words to 76 characters")
        }
        let words = line.dropFirst("Subject:".count).split(whereSeparator: \.isWhitespace)
        #expect(words.count > 1)
        #expect(words.allSatisfy { $0.hasPrefix("=?UTF-8?B?") && $0.hasSuffix("?=") && $0.count <= 75 })
        #expect(Self.decodeEncodedWords(words) == subject)
    }

    @Test("an ASCII subject that looks like an encoded-word is encoded so it reads back verbatim")
    func lookalikeSubjectEncoded() throws {
        let rendered = try Self.message(subject: "=?UTF-8?B?aGk=?=").rendered()
        let line = try #require(Self.headerLine("Subject", in: rendered))
        #expect(!line.contains("aGk=?="))
        #expect(Self.decodeEncodedWords(line.dropFirst("Subject: ".count).split(separator: " ")) == "=?UTF-8?B?aGk=?=")
    }

    @Test("a long ASCII subject is folded at spaces and unfolds to the original")
    func longSubjectFolded() throws {
        let subject = Array(repeating: "word", count: 40).joined(separator: " ")
        let line = try #require(Self.headerLine("Subject", in: try Self.message(subject: subject).rendered()))
        let physical = line.components(separatedBy: "\r\n")
        #expect(physical.count > 1)
        #expect(physical.allSatisfy { $0.utf8.count <= 78 })
        #expect(line.replacingOccurrences(of: "\r\n", with: "") == "Subject: \(subject)")
    }

    @Test("display names are quoted or encoded as needed and the bare address is kept")
    func displayNames() throws {
        let quoted = try MailMessage(
            from: "\"Storefront, Support\" <help@storefront.local>", to: "Zoë Ölund <zoe@example.com>", subject: "Hi", body: "")
        #expect(quoted.from.displayName == "Storefront, Support")
        #expect(quoted.from.address == "help@storefront.local")
        let rendered = quoted.rendered()
        #expect(rendered.hasPrefix("From: \"Storefront, Support\" <help@storefront.local>\r\n"))
        let to = try #require(Self.headerLine("To", in: rendered))
        #expect(to.hasPrefix("To: =?UTF-8?B?") && to.hasSuffix("?= <zoe@example.com>"))
    }

    @Test("without an id the message gets a random one at the sender's domain")
    func generatedMessageID() throws {
        let first = try MailMessage(from: "no-reply@storefront.local", to: "ada@example.com", subject: "a", body: "b")
        let second = try MailMessage(from: "no-reply@storefront.local", to: "ada@example.com", subject: "a", body: "b")
        #expect(first.messageID.hasSuffix("@storefront.local"))
        #expect(first.messageID != second.messageID)
        #expect(first.rendered().contains("\r\nMessage-ID: <\(first.messageID)>\r\n"))
    }

    @Test("a message id given in angle brackets is stored without them")
    func bracketedMessageID() throws {
        let message = try MailMessage(from: "a@b.c", to: "d@e.f", subject: "s", body: "", messageID: "<x.1@b.c>")
        #expect(message.messageID == "x.1@b.c")
    }

    /// The header named `name`, with its folded continuation lines.
    static func headerLine(_ name: String, in rendered: String) -> String? {
        let head = rendered.components(separatedBy: "\r\n\r\n")[0]
        var result: String?
        for line in head.components(separatedBy: "\r\n") {
            if line.hasPrefix("\(name):") {
                result = line
            } else if let current = result, line.hasPrefix(" ") {
                result = current + "\r\n" + line
            } else if result != nil {
                break
            }
        }
        return result
    }

    /// Decodes adjacent `=?UTF-8?B?...?=` words; whitespace between them is dropped (RFC 2047 §6.2).
    static func decodeEncodedWords(_ words: [Substring]) -> String? {
        var bytes = Data()
        for word in words {
            guard word.hasPrefix("=?UTF-8?B?"), word.hasSuffix("?="),
                let decoded = Data(base64Encoded: String(word.dropFirst(10).dropLast(2)))
            else { return nil }
            bytes.append(decoded)
        }
        return String(data: bytes, encoding: .utf8)
    }
}
