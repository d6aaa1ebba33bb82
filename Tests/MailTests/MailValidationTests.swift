import Foundation
import Testing

@testable import Mail

/// What a message refuses to be built from: header injection, malformed addresses, bodies
/// that 8bit transfer cannot carry.
@Suite("Validating a message")
struct MailValidationTests {
    /// Builds a message with one field replaced.
    static func build(
        from: String = "Storefront <no-reply@storefront.local>", to: String = "ada@example.com", subject: String = "Hi",
        body: String = "Hello", headers: [(name: String, value: String)] = [], messageID: String? = nil
    ) throws(MailMessageError) -> MailMessage {
        try MailMessage(from: from, to: to, subject: subject, body: body, headers: headers, messageID: messageID)
    }

    @Test("a line break in the subject is refused rather than starting a new header", arguments: ["\r\n", "\n", "\r"])
    func subjectInjection(lineBreak: String) {
        #expect(throws: MailMessageError.invalidHeaderValue(name: "Subject")) {
            try Self.build(subject: "Hello\(lineBreak)Bcc: victim@example.com")
        }
    }

    @Test(
        "a line break or bracket trick in an address is refused",
        arguments: [
            "ada@example.com\r\nBcc: victim@example.com", "ada@example.com\nRCPT TO:<victim@example.com>",
            "Ada\r\n <ada@example.com>", "ada@example.com>\r\nDATA", "<ada@example.com> x",
        ])
    func addressInjection(address: String) {
        #expect(throws: MailMessageError.self) { try Self.build(to: address) }
        #expect(throws: MailMessageError.self) { try Self.build(from: address) }
    }

    @Test("a line break in an extra header's value is refused")
    func headerValueInjection() {
        #expect(throws: MailMessageError.invalidHeaderValue(name: "X-Storefront-Kind")) {
            try Self.build(headers: [("X-Storefront-Kind", "verify-email\r\nBcc: victim@example.com")])
        }
    }

    @Test(
        "header names must be printable ASCII without a colon", arguments: ["X Kind", "X-Kind:", "", "X-Kind\r\nBcc", "Ünicode"])
    func badHeaderNames(name: String) {
        #expect(throws: MailMessageError.invalidHeaderName(name)) { try Self.build(headers: [(name, "value")]) }
    }

    @Test("headers the message writes itself cannot be added again", arguments: ["Content-Type", "from", "BCC", "Message-ID"])
    func reservedHeaders(name: String) {
        #expect(throws: MailMessageError.reservedHeader(name)) { try Self.build(headers: [(name, "value")]) }
    }

    @Test(
        "a message id must be left@right without spaces, brackets or line breaks",
        arguments: ["no-at", "a b@c", "a@b\r\nX: y", "<a@b", "@b"])
    func badMessageIDs(id: String) {
        #expect(throws: MailMessageError.invalidMessageID(id)) { try Self.build(messageID: id) }
    }

    @Test(
        "the bare address is what an SMTP envelope needs",
        arguments: [
            ("Storefront <no-reply@storefront.local>", "no-reply@storefront.local", "Storefront"),
            ("no-reply@storefront.local", "no-reply@storefront.local", nil),
            ("  <ada.lovelace+shop@mail.example.com>  ", "ada.lovelace+shop@mail.example.com", nil),
            ("\"Lovelace, Ada \\\"A\\\"\" <ada@example.com>", "ada@example.com", "Lovelace, Ada \"A\""),
        ] as [(String, String, String?)])
    func bareAddress(text: String, address: String, displayName: String?) throws {
        let parsed = try MailAddress(parsing: text)
        #expect(parsed.address == address)
        #expect(parsed.displayName == displayName)
    }

    @Test(
        "malformed addresses are refused",
        arguments: ["", "no-at-sign", "a@b@c", "a b@example.com", ".ada@example.com", "ada..x@example.com", "ada@-example.com",
                    "ada@exa_mple.com", "ada@", "@example.com", "ädä@example.com", "Ada <ada@example.com"])
    func malformedAddresses(text: String) {
        #expect(throws: MailMessageError.self) { try MailAddress(parsing: text) }
    }

    @Test("a display name round-trips through rendering with its quotes escaped")
    func quotedDisplayName() throws {
        let address = try MailAddress(displayName: "Lovelace, Ada \"A\"", address: "ada@example.com")
        #expect(address.description == "\"Lovelace, Ada \\\"A\\\"\" <ada@example.com>")
        #expect(try MailAddress(parsing: address.description) == address)
    }

    @Test("a body line over 998 octets is refused, one of 998 is fine")
    func longBodyLine() throws {
        let limit = String(repeating: "x", count: 998)
        _ = try Self.build(body: "short\n\(limit)\nshort")
        #expect(throws: MailMessageError.bodyLineTooLong(line: 2)) { try Self.build(body: "short\n\(limit)y\nshort") }
    }

    @Test("a NUL in the body is refused")
    func nulInBody() {
        #expect(throws: MailMessageError.invalidBodyCharacter(line: 3)) { try Self.build(body: "a\r\nb\r\nc\u{0}") }
    }

    @Test("a non-ASCII body is carried as 8-bit text, unchanged")
    func eightBitBody() throws {
        let message = try Self.build(body: "Grüße 👋")
        #expect(message.hasEightBitBody)
        #expect(message.rendered().hasSuffix("\r\n\r\nGrüße 👋\r\n"))
        #expect(try !Self.build(body: "plain").hasEightBitBody)
    }
}
