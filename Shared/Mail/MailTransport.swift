/// Something that delivers a ``MailMessage``: ``SMTPTransport`` to a mail server,
/// ``MailDirectoryTransport`` to files for development and tests.
///
/// `deliver` blocks (on DNS, the network or the disk) until the message is accepted or has
/// failed, so callers run it on a worker thread, never on an event loop or in an async
/// function that must stay responsive. Conforming types are `Sendable`; each delivery is
/// independent, so several threads may deliver through one transport at once.
package protocol MailTransport: Sendable {
    /// Delivers one message; returns once the receiver has taken responsibility for it
    /// (the SMTP server replied 250 to the data, or the file was renamed into place).
    /// On failure, ``MailDeliveryError/isTransient`` says whether to try again later.
    func deliver(_ message: MailMessage) throws(MailDeliveryError)
}

/// Why a delivery failed, and whether trying again later may succeed.
package struct MailDeliveryError: Error, Hashable, CustomStringConvertible {
    /// What went wrong.
    package enum Reason: Sendable, Hashable {
        /// The server's name did not resolve, or connecting failed (refused, unreachable).
        case cannotConnect
        /// A connect, read or write did not finish within the transport's timeout.
        case timedOut
        /// The server closed the connection before the conversation ended.
        case connectionClosed
        /// The server refused with this SMTP reply code: 4xx is temporary, 5xx permanent.
        case rejected(replyCode: Int)
        /// The server answered something that is not an SMTP reply, or not the one expected.
        case unexpectedReply
        /// The mail directory could not be created or written.
        case storage
    }

    /// What went wrong.
    package let reason: Reason
    /// Details for logs: the server's reply text or the failed system call.
    package let detail: String

    /// Creates an error.
    package init(_ reason: Reason, detail: String) {
        self.reason = reason
        self.detail = detail
    }

    /// Whether the same message may be delivered later: `true` for everything except a 5xx
    /// rejection, which means the server will refuse this message (e.g. an unknown
    /// recipient) however often it is sent. A full disk or a missing permission is
    /// transient: an operator can fix it, and the message itself is not at fault.
    package var isTransient: Bool {
        if case .rejected(let code) = reason { return !(500...599).contains(code) }
        return true
    }

    /// The reason, whether it is transient, and the detail, for logs.
    package var description: String {
        let kind = isTransient ? "transient" : "permanent"
        switch reason {
        case .cannotConnect: return "cannot connect (\(kind)): \(detail)"
        case .timedOut: return "timed out (\(kind)): \(detail)"
        case .connectionClosed: return "connection closed (\(kind)): \(detail)"
        case .rejected(let code): return "rejected with \(code) (\(kind)): \(detail)"
        case .unexpectedReply: return "unexpected reply (\(kind)): \(detail)"
        case .storage: return "cannot store (\(kind)): \(detail)"
        }
    }
}
