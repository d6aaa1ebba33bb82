import Mail
import Synchronization

/// A `MailTransport` for tests: records the messages it accepts instead of sending them, and
/// can be told to fail the next few attempts with a transient error, as an unreachable SMTP
/// server would.
///
/// Thread-safe: the record lives behind a `Mutex` (the outbox delivers on its own thread).
final class RecordingMailTransport: MailTransport {
    private struct State {
        var delivered: [MailMessage] = []
        var attempts = 0
        var failuresLeft = 0
    }

    private let state = Mutex(State())

    /// A transport that fails its first `failures` attempts, then accepts everything.
    init(failing failures: Int = 0) {
        state.withLock { $0.failuresLeft = failures }
    }

    /// The messages accepted so far, oldest first.
    var delivered: [MailMessage] { state.withLock { $0.delivered } }

    /// Every call to `deliver`, failed or not.
    var attempts: Int { state.withLock { $0.attempts } }

    /// Makes the next `count` attempts fail.
    func failNext(_ count: Int) {
        state.withLock { $0.failuresLeft = count }
    }

    func deliver(_ message: MailMessage) throws(MailDeliveryError) {
        let accepted = state.withLock { state -> Bool in
            state.attempts += 1
            guard state.failuresLeft == 0 else {
                state.failuresLeft -= 1
                return false
            }
            state.delivered.append(message)
            return true
        }
        guard accepted else { throw MailDeliveryError(.cannotConnect, detail: "connection refused (test)") }
    }
}
