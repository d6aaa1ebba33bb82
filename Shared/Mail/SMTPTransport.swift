/// Delivers mail to an SMTP server (RFC 5321) in plain text: no TLS and no AUTH, so it is
/// meant for a relay on the same host or network (a local Postfix, a dev catcher such as
/// Mailpit) that forwards the mail onwards.
///
/// Each ``deliver(_:)`` opens a connection, reads the 220 greeting, says `EHLO` (`HELO` if
/// the server refuses `EHLO` with 5xx), sends `MAIL FROM`, `RCPT TO` and the dot-stuffed
/// message after `DATA`, checks the 250 that accepts it, and says `QUIT`. The connect and
/// every read and write are bounded by ``timeout``; the whole delivery by a few of them.
///
/// Errors: refused or unreachable servers, timeouts, dropped connections and 4xx replies
/// are transient; 5xx replies are permanent (see ``MailDeliveryError/isTransient``).
/// A value type holding only configuration: thread-safe, and each delivery is independent.
package struct SMTPTransport: MailTransport {
    /// The server's host name or address.
    package let host: String
    /// The server's port: 25 for a relay, 1025 or similar for a development catcher.
    package let port: Int
    /// The name this client gives in `EHLO`: its own host name, or an address literal such
    /// as `[127.0.0.1]`. Characters that cannot appear in either were removed.
    package let heloName: String
    /// The most a connect, a read or a write may take.
    package let timeout: Duration

    /// Creates a transport. `heloName` keeps only the characters of a host name or an address
    /// literal (letters, digits, `.-:[]`), so configuration cannot inject a command; when
    /// nothing is left it becomes `localhost`.
    package init(host: String, port: Int = 25, heloName: String = "localhost", timeout: Duration = .seconds(30)) {
        self.host = host
        self.port = port
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]".utf8)
        let name = String(decoding: heloName.utf8.filter(allowed.contains), as: UTF8.self)
        self.heloName = name.isEmpty ? "localhost" : name
        self.timeout = timeout
    }

    /// Delivers `message` to ``host``; blocks until the server accepted it or it failed.
    package func deliver(_ message: MailMessage) throws(MailDeliveryError) {
        let session = try SMTPSession(host: host, port: port, timeout: timeout)
        defer { session.close() }
        try session.send(message, heloName: heloName, payload: Self.dataPayload(message.rendered()))
    }

    /// What follows `DATA`: the rendered message with every line that starts with `.` given
    /// one more `.` (RFC 5321 §4.5.2, the server removes it again), then the `CRLF.CRLF`
    /// that ends the data. `rendered` uses CRLF line ends and ends with CRLF.
    static func dataPayload(_ rendered: String) -> [UInt8] {
        var payload: [UInt8] = []
        payload.reserveCapacity(rendered.utf8.count + 16)
        var atLineStart = true
        for byte in rendered.utf8 {
            if atLineStart, byte == UInt8(ascii: ".") { payload.append(UInt8(ascii: ".")) }
            payload.append(byte)
            atLineStart = byte == UInt8(ascii: "\n")
        }
        if !atLineStart { payload += Array("\r\n".utf8) }
        payload += Array(".\r\n".utf8)
        return payload
    }
}
