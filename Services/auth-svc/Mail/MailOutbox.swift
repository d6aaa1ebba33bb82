import Foundation
import Logging
import Mail
import ServiceKit
import Synchronization

/// Delivers the emails queued in the outbox table: right away when woken, else when the next
/// one falls due. A delivered email leaves the table; a failed one stays, with its attempt
/// counted and the next attempt 1 s later, doubling up to 10 minutes, so an email survives
/// both an unreachable mail server and a restart — until the link it carries has expired
/// (24 hours for verification, 1 hour for a reset): a later delivery would bring only a dead
/// link, so a failure after that removes it, logged as an error. Addresses that always refuse
/// mail are then not retried every ten minutes for good.
///
/// Delivery blocks (disk or network), so it runs on a pool of its own thread, one email at a
/// time. Each email's `Message-ID` comes from its outbox row: a retry after a crash replaces
/// the `.eml` file rather than adding a second one, and lets an SMTP receiver spot the
/// duplicate. With several replicas on one database, each email is claimed by one of them for
/// an attempt (``deliveryLease``). Thread-safe; `run()` is owned by the service's task group.
final class MailOutbox: Sendable {
    /// The longest wait between attempts at one email.
    static let maximumBackoff: Int64 = 600

    /// How long (seconds) a claimed email is this replica's to deliver: well beyond one
    /// attempt (an SMTP delivery is bounded by a few 30-second timeouts), so only a replica
    /// that died while delivering lets another send it again.
    static let deliveryLease: Int64 = 300

    private let store: AuthStore
    private let transport: any MailTransport
    private let sender: String
    private let pool: BlockingPool
    private let logger: Logger
    private let metrics: AuthMetrics
    private let doorbell = Doorbell()

    /// An outbox delivering through `transport` with `sender` in `From`, counting what
    /// becomes of each email in `metrics`.
    init(store: AuthStore, transport: any MailTransport, sender: String, logger: Logger, metrics: AuthMetrics) {
        self.store = store
        self.transport = transport
        self.sender = sender
        self.pool = BlockingPool(threads: 1, name: "mail", queueLimit: 16)
        self.logger = logger
        self.metrics = metrics
    }

    /// Tells the loop an email was queued.
    func wake() { doorbell.ring() }

    /// Delivers until the calling task is cancelled.
    func run() async {
        defer { pool.shutdown() }
        while !Task.isCancelled {
            await deliverDue()
            let wait: Duration
            if let due = try? await store.nextEmailDue() {
                wait = .seconds(max(1, min(30, due - Timestamp.now())))
            } else {
                wait = .seconds(30)
            }
            await doorbell.wait(upTo: wait)
        }
    }

    /// Makes one attempt at every email due now, one at a time, each first claimed
    /// (``AuthStore/claimDueEmail(dueBy:now:lease:)``) so that another replica's outbox does not
    /// send it too. An email that fails is due again only after this pass.
    func deliverDue() async {
        let dueBy = Timestamp.now()
        while !Task.isCancelled {
            let entry: OutboxEntry?
            do {
                entry = try await store.claimDueEmail(dueBy: dueBy, lease: Self.deliveryLease)
            } catch {
                logger.error("cannot read the outbox", metadata: ["error": "\(error)"])
                return
            }
            guard let entry else { return }
            await attempt(entry)
        }
    }

    private func attempt(_ entry: OutboxEntry) async {
        let transport = transport
        let sender = sender
        do {
            try await pool.run {
                let message = try Self.message(for: entry, from: sender)
                try transport.deliver(message)
            }
            try await store.removeEmail(outboxID: entry.id)
            metrics.countMail(entry.email.kind, .sent)
            logger.info(
                "email delivered",
                metadata: ["outbox-id": "\(entry.id)", "kind": "\(entry.email.kind.rawValue)", "attempt": "\(entry.attempts + 1)"])
        } catch {
            metrics.countMail(entry.email.kind, .failed)
            if Timestamp.now() >= entry.linkExpiresAt {
                try? await store.removeEmail(outboxID: entry.id)
                metrics.countMail(entry.email.kind, .givenUp)
                logger.error(
                    "email given up: its link has expired",
                    metadata: [
                        "outbox-id": "\(entry.id)", "kind": "\(entry.email.kind.rawValue)", "attempts": "\(entry.attempts + 1)",
                        "error": "\(error)",
                    ])
                return
            }
            let backoff = min(Self.maximumBackoff, Int64(1) << min(entry.attempts, 20))
            try? await store.markFailed(outboxID: entry.id, error: "\(error)", retryAt: Timestamp.now() + backoff)
            // A permanent failure stays too while the link works (the address may be fixed on the
            // receiving side), logged as an error for an operator.
            let transient = (error as? MailDeliveryError)?.isTransient ?? !(error is MailMessageError)
            logger.log(
                level: transient ? .warning : .error, "email delivery failed; will retry",
                metadata: [
                    "outbox-id": "\(entry.id)", "attempt": "\(entry.attempts + 1)", "retry-in": "\(backoff)s",
                    "error": "\(error)",
                ])
        }
    }

    /// The message for an outbox row; its id is derived from the row (see the type's notes).
    static func message(for entry: OutboxEntry, from sender: String) throws -> MailMessage {
        let domain = sender.split(separator: "@").last.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "> ")) }
        return try MailMessage(
            from: sender, to: entry.email.recipient, subject: entry.email.subject, body: entry.email.body,
            headers: [("X-Storefront-Kind", entry.email.kind.rawValue)],
            messageID: "auth-outbox-\(entry.id)@\(domain ?? "storefront.local")")
    }
}

/// Wakes one waiting task, or the next one to wait: a ring is never lost. Thread-safe.
final class Doorbell: Sendable {
    private struct State {
        var rung = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    /// Rings: wakes the waiter, or lets the next `wait` return at once.
    func ring() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.rung = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns when rung, after `timeout`, or when the calling task is cancelled.
    func wait(upTo timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                // A cancelled timer stays silent; at worst a late ring makes the next wait
                // return at once, which costs one empty pass over the outbox.
                guard (try? await Task.sleep(for: timeout)) != nil else { return }
                self.ring()
            }
            // Cancellation rings too, so a service shutting down is never left waiting here.
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let ready = state.withLock { state -> Bool in
                        if state.rung {
                            state.rung = false
                            return true
                        }
                        state.waiter = continuation
                        return false
                    }
                    if ready { continuation.resume() }
                }
            } onCancel: {
                self.ring()
            }
            group.cancelAll()
        }
    }
}
