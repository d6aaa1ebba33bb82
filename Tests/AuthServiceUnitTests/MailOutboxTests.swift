@testable import auth_svc
import Credentials
import Logging
import Mail
import ServiceKit
import ServiceTestSupport
import Storage
import Telemetry
import Testing

/// `MailOutbox` delivering from an in-memory store through a recording transport: delivery,
/// retry without loss, and the message each outbox row becomes.
@Suite("MailOutbox: delivering the queued emails")
struct MailOutboxTests {
    private let sender = "Storefront <no-reply@storefront.test>"

    /// An outbox over `store` and `transport` that logs nowhere and counts into `registry`.
    private func makeOutbox(
        _ store: AuthStore, _ transport: RecordingMailTransport, registry: MetricsRegistry? = nil
    ) -> MailOutbox {
        MailOutbox(
            store: store, transport: transport, sender: sender,
            logger: Logger(label: "mail-outbox-test") { _ in SwiftLogNoOpLogHandler() },
            metrics: AuthMetrics(registry: registry))
    }

    /// Ends the outbox's delivery thread: `run()` in a task created already cancelled skips its
    /// loop and shuts the thread down on the way out.
    private func stop(_ outbox: MailOutbox) async {
        await withTaskGroup(of: Void.self) { group in
            group.cancelAll()
            group.addTask { await outbox.run() }
        }
    }

    /// Queues a verification email for a new user, as `SignUp` does; returns the token.
    private func queueVerification(in store: AuthStore, now: Int64 = Timestamp.now()) async throws -> String {
        let user = try await store.makePasswordUser("ada@example.com")
        let token = OpaqueToken.generate()
        try await store.issueEmailToken(
            userID: user.id, purpose: .verifyEmail, tokenHash: OpaqueToken.hash(token),
            email: AuthEmails(linkBaseURL: "https://shop.test").verification(to: user.email, token: token), now: now)
        return token
    }

    @Test("a queued email is delivered by deliverDue and leaves the outbox")
    func deliversQueuedEmail() async throws {
        try await AuthStore.withFresh { store in
            let transport = RecordingMailTransport()
            let outbox = makeOutbox(store, transport)
            let token = try await queueVerification(in: store)
            let entry = try #require(try await store.dueEmails().first)

            await outbox.deliverDue()
            await stop(outbox)

            #expect(transport.delivered.count == 1)
            let message = try #require(transport.delivered.first)
            #expect(message.to.address == "ada@example.com")
            #expect(message.body.contains("Token: \(token)"))
            #expect(message.messageID == "auth-outbox-\(entry.id)@storefront.test")
            #expect(try await store.nextEmailDue() == nil)
        }
    }

    @Test("a failed delivery stays queued with its attempt counted and a later retry time, then goes out")
    func retriesWithoutLoss() async throws {
        try await AuthStore.withFresh { store in
            let transport = RecordingMailTransport(failing: 1)
            let outbox = makeOutbox(store, transport)
            let queuedAt = Timestamp.now()
            _ = try await queueVerification(in: store, now: queuedAt)

            let before = Timestamp.now()
            await outbox.deliverDue()
            let after = Timestamp.now()
            #expect(transport.attempts == 1)
            #expect(transport.delivered.isEmpty)
            let kept = try #require(try await store.dueEmails(now: after + 3600).first)
            #expect(kept.attempts == 1)
            // The first retry waits one second (the backoff starts at 1 s and doubles).
            let retryAt = try #require(try await store.nextEmailDue())
            #expect((before + 1)...(after + 1) ~= retryAt)
            #expect(retryAt > queuedAt)

            // Time passes: make the row due now rather than sleeping until it is.
            try await store.markFailed(outboxID: kept.id, error: "test: time passed", retryAt: Timestamp.now() - 1)
            await outbox.deliverDue()
            await stop(outbox)

            #expect(transport.attempts == 2)
            #expect(transport.delivered.map(\.messageID) == ["auth-outbox-\(kept.id)@storefront.test"])
            #expect(try await store.nextEmailDue() == nil)
        }
    }

    @Test("a failure after the email's link has expired removes it; before, it stays")
    func expiredLinkGivenUp() async throws {
        try await AuthStore.withFresh { store in
            let transport = RecordingMailTransport(failing: 2)
            let registry = MetricsRegistry()
            let outbox = makeOutbox(store, transport, registry: registry)
            // Queued 23 hours ago: its 24-hour verification link still works.
            _ = try await queueVerification(in: store, now: Timestamp.now() - 23 * 3600)
            await outbox.deliverDue()
            let kept = try #require(try await store.dueEmails(now: Timestamp.now() + 3600).first)
            #expect(kept.attempts == 1)

            // Queued 25 hours ago: the link is dead, so the failed email leaves the outbox.
            try await store.database.write { try $0.execute("UPDATE outbox SET created_at = created_at - 7200, next_attempt_at = 0") }
            await outbox.deliverDue()
            await stop(outbox)
            #expect(transport.attempts == 2)
            #expect(try await store.nextEmailDue() == nil)
            // Both attempts failed; the second gave the email up.
            let metrics = MetricsScrape(exposition: registry.exposition())
            #expect(metrics.value("auth_mails_total{kind=\"verification\",outcome=\"failed\"}") == 2)
            #expect(metrics.value("auth_mails_total{kind=\"verification\",outcome=\"given_up\"}") == 1)
            #expect(metrics.value("auth_mails_total{kind=\"verification\",outcome=\"sent\"}") == 0)
        }
    }

    @Test("an email not yet due is left alone")
    func notDueYet() async throws {
        try await AuthStore.withFresh { store in
            let transport = RecordingMailTransport()
            let outbox = makeOutbox(store, transport)
            _ = try await queueVerification(in: store)
            let entry = try #require(try await store.dueEmails().first)
            try await store.markFailed(outboxID: entry.id, error: "test", retryAt: Timestamp.now() + 3600)

            await outbox.deliverDue()
            await stop(outbox)
            #expect(transport.attempts == 0)
            #expect(try await store.dueEmails(now: Timestamp.now() + 3600).count == 1)
        }
    }

    @Test(
        "an outbox row becomes a message with its kind header and a Message-ID derived from the row id",
        arguments: [
            (EmailTokenPurpose.verifyEmail, "Storefront <no-reply@storefront.test>", "storefront.test"),
            (EmailTokenPurpose.resetPassword, "no-reply@shop.example.com", "shop.example.com"),
        ])
    func messageForEntry(kind: EmailTokenPurpose, sender: String, domain: String) throws {
        let entry = OutboxEntry(
            id: 42,
            email: OutgoingEmail(recipient: "ada@example.com", kind: kind, subject: "Hello", body: "Token: abc\n"),
            attempts: 3, queuedAt: 0)
        let message = try MailOutbox.message(for: entry, from: sender)
        #expect(message.messageID == "auth-outbox-42@\(domain)")
        #expect(message.headers.map(\.name) == ["X-Storefront-Kind"])
        #expect(message.headers.first?.value == kind.rawValue)
        let text = message.rendered()
        #expect(text.contains("X-Storefront-Kind: \(kind.rawValue)\r\n"))
        #expect(text.contains("Message-ID: <auth-outbox-42@\(domain)>\r\n"))
        // A retry of the same row is recognisably the same message.
        #expect(try MailOutbox.message(for: entry, from: sender).messageID == message.messageID)
    }
}
