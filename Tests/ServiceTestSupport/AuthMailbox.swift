package import Foundation
package import Testing

/// The emails a running auth-svc delivers into `<data-dir>/mail/*.eml`.
///
/// Delivery goes through auth-svc's outbox loop, so an email appears some time after the call
/// that caused it; the waiting helpers poll. Immutable; `Sendable`.
package struct AuthMailbox: Sendable {
    /// The mail directory.
    package let directory: URL

    /// The mailbox of the auth-svc whose `--data-dir` is `authDataDirectory`.
    package init(authDataDirectory: URL) {
        directory = authDataDirectory.appendingPathComponent("mail")
    }

    /// Every email delivered so far to `address` of `kind`, oldest first.
    package func mails(to address: String, kind: DeliveredMail.Kind) -> [DeliveredMail] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".eml") }
            .compactMap { name -> DeliveredMail? in
                guard let data = try? Data(contentsOf: directory.appendingPathComponent(name)) else { return nil }
                return DeliveredMail(fileName: name, text: String(decoding: data, as: UTF8.self))
            }
            .filter { $0.kind == kind && $0.isAddressed(to: address) }
            .sorted(by: DeliveredMail.writtenBefore)
    }

    /// Waits until at least `count` emails of `kind` have reached `address`; returns them all.
    /// Records an issue and returns what there is when `limit` passes first.
    @discardableResult
    package func waitForMails(
        to address: String, kind: DeliveredMail.Kind, count: Int, within limit: Duration = .seconds(5),
        sourceLocation: SourceLocation = #_sourceLocation
    ) async -> [DeliveredMail] {
        let deadline = ContinuousClock.now + limit
        while true {
            let found = mails(to: address, kind: kind)
            if found.count >= count { return found }
            if ContinuousClock.now >= deadline {
                Issue.record(
                    "expected \(count) \(kind.rawValue) email(s) to \(address), found \(found.count)",
                    sourceLocation: sourceLocation)
                return found
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    /// The newest email of `kind` to `address`, waiting up to `limit` for the first one.
    package func latestMail(
        to address: String, kind: DeliveredMail.Kind, within limit: Duration = .seconds(5),
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> DeliveredMail {
        let found = await waitForMails(to: address, kind: kind, count: 1, within: limit, sourceLocation: sourceLocation)
        return try #require(found.last, sourceLocation: sourceLocation)
    }

    /// The token of the newest email of `kind` to `address`, waiting up to `limit` for it.
    package func latestToken(
        to address: String, kind: DeliveredMail.Kind, within limit: Duration = .seconds(5),
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> String {
        let mail = try await latestMail(to: address, kind: kind, within: limit, sourceLocation: sourceLocation)
        return try #require(mail.token, "no Token: line in \(mail)", sourceLocation: sourceLocation)
    }
}
