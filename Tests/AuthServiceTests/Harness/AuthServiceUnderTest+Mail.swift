import Foundation
import ServiceTestSupport
import Testing

/// Reading the emails auth-svc delivers into `<data-dir>/mail/*.eml`.
///
/// Delivery goes through an outbox loop, so an email appears some time after the call that
/// caused it; the waiting helpers poll.
extension AuthServiceUnderTest {
    /// Where the service delivers its emails (`<data-dir>/mail`).
    var mailbox: AuthMailbox { AuthMailbox(authDataDirectory: dataDirectory) }
    /// The mail directory.
    var mailDirectory: URL { mailbox.directory }

    /// Every email delivered so far to `address` of `kind`, oldest first.
    func mails(to address: String, kind: DeliveredMail.Kind) -> [DeliveredMail] {
        mailbox.mails(to: address, kind: kind)
    }

    /// Waits until at least `count` emails of `kind` have reached `address`; returns them all.
    /// Records an issue and returns what there is when `limit` passes first.
    @discardableResult
    func waitForMails(
        to address: String, kind: DeliveredMail.Kind, count: Int, within limit: Duration = .seconds(5),
        sourceLocation: SourceLocation = #_sourceLocation
    ) async -> [DeliveredMail] {
        await mailbox.waitForMails(to: address, kind: kind, count: count, within: limit, sourceLocation: sourceLocation)
    }

    /// The newest email of `kind` to `address`, waiting up to `limit` for the first one.
    func latestMail(
        to address: String, kind: DeliveredMail.Kind, within limit: Duration = .seconds(5),
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> DeliveredMail {
        try await mailbox.latestMail(to: address, kind: kind, within: limit, sourceLocation: sourceLocation)
    }

    /// The token of the newest email of `kind` to `address`.
    func latestToken(
        to address: String, kind: DeliveredMail.Kind, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> String {
        try await mailbox.latestToken(to: address, kind: kind, sourceLocation: sourceLocation)
    }

    /// Gives the outbox time to deliver anything still pending, then counts the emails of
    /// `kind` to `address`: for checks that something was *not* sent.
    func settledMailCount(to address: String, kind: DeliveredMail.Kind, after pause: Duration = .seconds(2)) async -> Int {
        try? await Task.sleep(for: pause)
        return mails(to: address, kind: kind).count
    }
}
