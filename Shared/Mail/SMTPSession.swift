internal import SystemCalls

/// One SMTP conversation (RFC 5321 §3) over a blocking connection: greeting, `EHLO` (or
/// `HELO`), one mail transaction, `QUIT`. Every failure becomes a ``MailDeliveryError``.
///
/// Not thread-safe; ``SMTPTransport`` makes one per delivery and uses it on the calling thread.
final class SMTPSession {
    private let connection: BlockingTCPConnection
    private var parser = SMTPReplyParser()
    /// The keywords the server listed in its `EHLO` reply, uppercased (`8BITMIME`, `SIZE`, ...).
    private(set) var extensions: Set<String> = []
    /// What the conversation is doing, for error details.
    private var stage = "connect"

    /// Connects to the server; connection failures are ``MailDeliveryError/Reason/cannotConnect``
    /// or ``MailDeliveryError/Reason/timedOut``.
    init(host: String, port: Int, timeout: Duration) throws(MailDeliveryError) {
        do throws(BlockingTCPError) {
            connection = try BlockingTCPConnection(host: host, port: port, timeout: timeout)
        } catch {
            if case .timedOut = error {
                throw MailDeliveryError(.timedOut, detail: "connecting to \(host):\(port) took longer than \(timeout)")
            }
            throw MailDeliveryError(.cannotConnect, detail: "\(host):\(port): \(error)")
        }
    }

    /// Sends `message` in one mail transaction, then says goodbye. When the server refuses a
    /// step, the session still sends `QUIT` before throwing, as RFC 5321 §4.1.1.10 asks.
    func send(_ message: MailMessage, heloName: String, payload: [UInt8]) throws(MailDeliveryError) {
        do throws(MailDeliveryError) {
            stage = "greeting"
            try expect(readReply(), 220)
            try greet(as: heloName)
            // RFC 6152: 8-bit body text needs BODY=8BITMIME where the server offers it.
            let body = message.hasEightBitBody && extensions.contains("8BITMIME") ? " BODY=8BITMIME" : ""
            try command("MAIL FROM:<\(message.from.address)>\(body)", expecting: 250)
            try command("RCPT TO:<\(message.to.address)>", expecting: 250, 251)
            try command("DATA", expecting: 354)
            stage = "message data"
            try write(payload)
            try expect(readReply(), 250)
        } catch {
            if case .rejected = error.reason { try? write(Array("QUIT\r\n".utf8)) }
            throw error
        }
        // The message is accepted; a failed goodbye does not change that.
        stage = "QUIT"
        _ = try? command("QUIT", expecting: 221)
    }

    /// Closes the connection.
    func close() {
        connection.close()
    }

    /// `EHLO`, falling back to `HELO` for servers that refuse it with 5xx (RFC 5321 §3.2).
    private func greet(as heloName: String) throws(MailDeliveryError) {
        stage = "EHLO"
        try write(Array("EHLO \(heloName)\r\n".utf8))
        let reply = try readReply()
        if (500...599).contains(reply.code) {
            try command("HELO \(heloName)", expecting: 250)
            return
        }
        try expect(reply, 250)
        // The first line greets; each further line names an extension and its parameters.
        extensions = Set(reply.lines.dropFirst().compactMap { $0.split(separator: " ").first.map { $0.uppercased() } })
    }

    /// Sends one command line and checks the reply code.
    @discardableResult
    private func command(_ line: String, expecting codes: Int...) throws(MailDeliveryError) -> SMTPReply {
        stage = line.hasPrefix("MAIL") ? "MAIL FROM" : line.hasPrefix("RCPT") ? "RCPT TO" : line
        try write(Array("\(line)\r\n".utf8))
        let reply = try readReply()
        try expect(reply, codes)
        return reply
    }

    private func expect(_ reply: SMTPReply, _ codes: Int...) throws(MailDeliveryError) {
        try expect(reply, codes)
    }

    /// Throws ``MailDeliveryError/Reason/rejected(replyCode:)`` for a 4xx or 5xx reply and
    /// ``MailDeliveryError/Reason/unexpectedReply`` for any other code not in `codes`.
    private func expect(_ reply: SMTPReply, _ codes: [Int]) throws(MailDeliveryError) {
        guard !codes.contains(reply.code) else { return }
        let detail = "the server answered \(stage) with \(reply)"
        throw MailDeliveryError(reply.isNegative ? .rejected(replyCode: reply.code) : .unexpectedReply, detail: detail)
    }

    /// The next complete reply, reading as much as it takes.
    private func readReply() throws(MailDeliveryError) -> SMTPReply {
        while true {
            if let reply = try parser.nextReply() { return reply }
            let bytes: [UInt8]
            do throws(BlockingTCPError) {
                bytes = try connection.read()
            } catch {
                throw failure(error, while: "waiting for the reply to \(stage)")
            }
            guard !bytes.isEmpty else {
                throw MailDeliveryError(.connectionClosed, detail: "the server closed the connection during \(stage)")
            }
            parser.append(bytes)
        }
    }

    private func write(_ bytes: [UInt8]) throws(MailDeliveryError) {
        do throws(BlockingTCPError) {
            try connection.write(bytes)
        } catch {
            throw failure(error, while: "sending \(stage)")
        }
    }

    /// A connection failure as a delivery error.
    private func failure(_ error: BlockingTCPError, while activity: String) -> MailDeliveryError {
        switch error {
        case .timedOut: MailDeliveryError(.timedOut, detail: "no progress within \(connection.timeout) \(activity)")
        case .closedByPeer, .system, .cannotResolve: MailDeliveryError(.connectionClosed, detail: "\(activity): \(error)")
        }
    }
}
