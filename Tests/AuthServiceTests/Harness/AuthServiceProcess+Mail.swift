import Foundation
import Testing

/// Reading the emails auth-svc delivers into `<data-dir>/mail/*.eml`.
///
/// Delivery goes through an outbox loop, so an email appears some time after the call that
/// caused it; the waiting helpers poll.
extension AuthServiceProcess {
    /// The mail directory.
    var mailDirectory: URL { dataDirectory.appendingPathComponent("mail") }

    /// Every email delivered so far to `address` of `kind`, oldest first.
    func mails(to address: String, kind: DeliveredMail.Kind) -> [DeliveredMail] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: mailDirectory.path)) ?? []
        return names.filter { $0.hasSuffix(".eml") }
            .compactMap { name -> DeliveredMail? in
                let url = mailDirectory.appendingPathComponent(name)
                guard let data = try? Data(contentsOf: url) else { return nil }
                return DeliveredMail(fileName: name, text: String(decoding: data, as: UTF8.self))
            }
            .filter { $0.kind == kind && $0.isAddressed(to: address) }
            .sorted(by: DeliveredMail.writtenBefore)
    }

    /// Waits until at least `count` emails of `kind` have reached `address`; returns them all.
    /// Records an issue and returns what there is when `limit` passes first.
    @discardableResult
    func waitForMails(
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
    func latestMail(
        to address: String, kind: DeliveredMail.Kind, within limit: Duration = .seconds(5),
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> DeliveredMail {
        let found = await waitForMails(to: address, kind: kind, count: 1, within: limit, sourceLocation: sourceLocation)
        return try #require(found.last, sourceLocation: sourceLocation)
    }

    /// The token of the newest email of `kind` to `address`.
    func latestToken(
        to address: String, kind: DeliveredMail.Kind, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> String {
        let mail = try await latestMail(to: address, kind: kind, sourceLocation: sourceLocation)
        return try #require(mail.token, "no Token: line in \(mail)", sourceLocation: sourceLocation)
    }

    /// Gives the outbox time to deliver anything still pending, then counts the emails of
    /// `kind` to `address`: for checks that something was *not* sent.
    func settledMailCount(to address: String, kind: DeliveredMail.Kind, after pause: Duration = .seconds(2)) async -> Int {
        try? await Task.sleep(for: pause)
        return mails(to: address, kind: kind).count
    }
}
