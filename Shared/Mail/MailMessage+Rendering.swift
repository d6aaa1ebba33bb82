internal import Foundation

extension MailMessage {
    /// The message as RFC 5322 text with CRLF line ends, ending in CRLF:
    ///
    /// ```
    /// From: Storefront <no-reply@storefront.local>
    /// To: ada@example.com
    /// Subject: Confirm your email
    /// Date: Tue, 05 May 2026 14:03:09 +0000
    /// Message-ID: <outbox-42@storefront.local>
    /// MIME-Version: 1.0
    /// Content-Type: text/plain; charset=utf-8
    /// Content-Transfer-Encoding: 8bit
    /// X-Storefront-Kind: verify-email
    ///
    /// body lines...
    /// ```
    ///
    /// The body goes out as UTF-8 unchanged (`8bit`, RFC 2045 §2.8), so a link in it stays
    /// readable in a mail file; the initializer already refused lines over 998 octets and NUL.
    /// Header values that are not plain ASCII become RFC 2047 encoded-words; long header
    /// lines are folded. SMTP dot-stuffing is the transport's job, not done here.
    package func rendered() -> String {
        var lines = [
            HeaderText.line(name: "From", value: from.description),
            HeaderText.line(name: "To", value: to.description),
            HeaderText.line(name: "Subject", value: HeaderText.unstructured(subject)),
            "Date: \(date.rfc5322Text)",
            "Message-ID: <\(messageID)>",
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: 8bit",
        ]
        for header in headers {
            lines.append(HeaderText.line(name: header.name, value: HeaderText.unstructured(header.value)))
        }
        lines.append("")
        lines += Self.bodyLines(body).map(String.init)
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// Whether the body holds bytes outside ASCII; only then does SMTP need `BODY=8BITMIME`
    /// (the headers are always ASCII once rendered).
    var hasEightBitBody: Bool {
        body.utf8.contains { $0 >= 0x80 }
    }
}

extension Date {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The date in UTC as RFC 5322 §3.3 writes it, e.g. `Tue, 05 May 2026 14:03:09 +0000`.
    /// Built by hand: the English names must not depend on the process locale.
    var rfc5322Text: String {
        let parts = utcComponents
        return "\(Self.weekdays[parts.weekday - 1]), \(Self.twoDigits(parts.day)) \(Self.months[parts.month - 1]) \(parts.year) "
            + "\(Self.twoDigits(parts.hour)):\(Self.twoDigits(parts.minute)):\(Self.twoDigits(parts.second)) +0000"
    }

    /// The date in UTC as `yyyyMMdd'T'HHmmss'Z'`, e.g. `20260505T140309Z`: sorts by time as text.
    var compactUTCText: String {
        let parts = utcComponents
        return "\(parts.year)\(Self.twoDigits(parts.month))\(Self.twoDigits(parts.day))T"
            + "\(Self.twoDigits(parts.hour))\(Self.twoDigits(parts.minute))\(Self.twoDigits(parts.second))Z"
    }

    private var utcComponents: (year: Int, month: Int, day: Int, weekday: Int, hour: Int, minute: Int, second: Int) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .weekday, .hour, .minute, .second], from: self)
        return (parts.year!, parts.month!, parts.day!, parts.weekday!, parts.hour!, parts.minute!, parts.second!)
    }

    private static func twoDigits(_ value: Int) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }
}
