import Testing

@testable import Mail

/// The SMTP pieces that need no server: reply parsing, dot-stuffing, the `EHLO` name.
@Suite("SMTP without a server")
struct SMTPReplyParserTests {
    /// Feeds `chunks` one by one and collects every reply completed along the way.
    static func replies(_ chunks: [String]) throws(MailDeliveryError) -> [SMTPReply] {
        var parser = SMTPReplyParser()
        var replies: [SMTPReply] = []
        for chunk in chunks {
            parser.append(Array(chunk.utf8))
            while let reply = try parser.nextReply() { replies.append(reply) }
        }
        return replies
    }

    @Test("a single-line reply is read with its code and text")
    func singleLine() throws {
        let replies = try Self.replies(["220 mail.example.com ESMTP ready\r\n"])
        #expect(replies == [SMTPReply(code: 220, lines: ["mail.example.com ESMTP ready"])])
    }

    @Test("continuation lines are joined into one multi-line reply")
    func multiLine() throws {
        let replies = try Self.replies(["250-mail.example.com\r\n250-SIZE 1000\r\n250-8BITMIME\r\n250 HELP\r\n"])
        #expect(replies == [SMTPReply(code: 250, lines: ["mail.example.com", "SIZE 1000", "8BITMIME", "HELP"])])
    }

    @Test("a reply split anywhere across reads comes out whole, and back-to-back replies stay apart")
    func splitAcrossReads() throws {
        let text = "250-first\r\n250 second\r\n354 go ahead\r\n"
        for cut in 1..<text.utf8.count {
            let bytes = Array(text.utf8)
            let chunks = [String(decoding: bytes[..<cut], as: UTF8.self), String(decoding: bytes[cut...], as: UTF8.self)]
            let replies = try Self.replies(chunks)
            #expect(replies == [SMTPReply(code: 250, lines: ["first", "second"]), SMTPReply(code: 354, lines: ["go ahead"])])
        }
    }

    @Test("bare LF line ends and a code without text are accepted")
    func lenientLines() throws {
        #expect(try Self.replies(["221\n"]) == [SMTPReply(code: 221, lines: [""])])
    }

    @Test(
        "text that is not an SMTP reply is refused",
        arguments: ["HTTP/1.1 400 Bad Request\r\n", "25\r\n", "250_odd\r\n", "199 too low\r\n", "250-a\r\n251 b\r\n"])
    func garbage(text: String) {
        #expect {
            try Self.replies([text])
        } throws: { error in
            (error as? MailDeliveryError)?.reason == .unexpectedReply
        }
    }

    @Test("an endless line without a line end is refused instead of buffered")
    func endlessLine() {
        #expect {
            try Self.replies(["220 ", String(repeating: "x", count: SMTPReplyParser.longestLine + 10)])
        } throws: { error in
            (error as? MailDeliveryError)?.reason == .unexpectedReply
        }
    }

    @Test("lines starting with a dot get another dot, and the data ends with CRLF.CRLF")
    func dotStuffing() {
        let payload = SMTPTransport.dataPayload("Subject: x\r\n\r\n.\r\n.hidden\r\nnot.first\r\n..two\r\n")
        #expect(String(decoding: payload, as: UTF8.self) == "Subject: x\r\n\r\n..\r\n..hidden\r\nnot.first\r\n...two\r\n.\r\n")
    }

    @Test("data without a final line end still ends with CRLF.CRLF")
    func missingFinalLineEnd() {
        #expect(String(decoding: SMTPTransport.dataPayload("a\r\n.b"), as: UTF8.self) == "a\r\n..b\r\n.\r\n")
    }

    @Test("the EHLO name keeps only host-name characters, so configuration cannot inject a command")
    func heloNameSanitized() {
        #expect(SMTPTransport(host: "h", heloName: "shop.example.com\r\nRCPT TO:<x@y>").heloName == "shop.example.comRCPTTO:xy")
        #expect(SMTPTransport(host: "h", heloName: "[127.0.0.1]").heloName == "[127.0.0.1]")
        #expect(SMTPTransport(host: "h", heloName: "\r\n").heloName == "localhost")
    }

    @Test("only 5xx rejections are permanent", arguments: [
        (MailDeliveryError.Reason.rejected(replyCode: 550), false), (.rejected(replyCode: 554), false),
        (.rejected(replyCode: 451), true), (.rejected(replyCode: 421), true), (.cannotConnect, true), (.timedOut, true),
        (.connectionClosed, true), (.unexpectedReply, true), (.storage, true),
    ])
    func transience(reason: MailDeliveryError.Reason, isTransient: Bool) {
        #expect(MailDeliveryError(reason, detail: "").isTransient == isTransient)
    }
}
