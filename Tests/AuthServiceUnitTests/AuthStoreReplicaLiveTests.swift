@testable import auth_svc
import Credentials
import Foundation
import Logging
import Mail
import ServiceKit
import ServiceTestSupport
import Storage
import Testing

/// Two replicas of auth-svc on one database: two `AuthStore`s, each with its own `Database`
/// (its own connections), racing on the same rows — on a SQLite file, and in the schema `auth`
/// of a PostgreSQL database, where writes run at `SERIALIZABLE` and are run again on conflict.
/// Whatever the backend, a race ends as the same calls one after the other would.
@Suite("AuthStore: two replicas on one database")
struct AuthStoreReplicaLiveTests {
    private let epoch = AuthStore.testEpoch
    private let emails = AuthEmails(linkBaseURL: "https://shop.test")

    /// How many races each test runs at once: enough for the two calls of some of them to
    /// overlap in the database.
    private static let races = 12

    /// Where the two replicas keep their data.
    enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case sqlite, postgresql
        var testDescription: String { rawValue }
    }

    /// Runs `body` with two stores open on one new, empty database of `backend`, and closes
    /// them (and drops or deletes the database) afterwards.
    private func withTwoReplicas(
        _ backend: Backend, _ body: (AuthStore, AuthStore) async throws -> Void
    ) async throws {
        switch backend {
        case .sqlite:
            let directory = try TestScratch.makeDirectory(prefix: "auth-replicas")
            defer { try? FileManager.default.removeItem(at: directory) }
            try await withTwoStores(at: .sqlite(path: directory.appendingPathComponent("auth.sqlite").path), body)
        case .postgresql:
            try await PostgreSQLServer.withDatabase { url in
                try await withTwoStores(at: .postgresql(url: url, schema: "auth"), body)
            }
        }
    }

    /// Runs `body` with two stores open on `location`, closing both whatever it did.
    private func withTwoStores(at location: DatabaseLocation, _ body: (AuthStore, AuthStore) async throws -> Void) async throws {
        let first = try await AuthStore.open(location: location)
        let second: AuthStore
        do { second = try await AuthStore.open(location: location) } catch {
            await first.database.close()
            throw error
        }
        let outcome: Result<Void, any Error>
        do { outcome = .success(try await body(first, second)) } catch { outcome = .failure(error) }
        await first.database.close()
        await second.database.close()
        try outcome.get()
    }

    /// A fresh token hash, as the handlers store them.
    private func freshHash() -> String { OpaqueToken.hash(OpaqueToken.generate()) }

    @Test(
        "the same refresh token presented on two replicas at once rotates once; the other presentation is reuse and revokes the session",
        arguments: Backend.allCases)
    func concurrentRefresh(backend: Backend) async throws {
        try await withTwoReplicas(backend) { first, second in
            let user = try await first.makePasswordUser("ada@example.com")
            var sessions: [(SessionRecord, refreshHash: String)] = []
            for _ in 0..<Self.races { sessions.append(try await first.makeSession(for: user.id)) }

            let outcomes = try await withThrowingTaskGroup(of: (String, [AuthStore.RefreshOutcome]).self) { group in
                for (session, refreshHash) in sessions {
                    let (firstNew, secondNew, now) = (freshHash(), freshHash(), epoch + 60)
                    group.addTask {
                        async let onFirst = first.rotateRefreshToken(hash: refreshHash, newHash: firstNew, now: now)
                        async let onSecond = second.rotateRefreshToken(hash: refreshHash, newHash: secondNew, now: now)
                        return (session.id, [try await onFirst, try await onSecond])
                    }
                }
                return try await group.reduce(into: [:]) { outcomes, race in outcomes[race.0] = race.1 }
            }

            for (session, _) in sessions {
                let pair = try #require(outcomes[session.id])
                let rotated = pair.filter { if case .rotated = $0 { true } else { false } }
                let reused = pair.compactMap { if case .reused(let id) = $0 { id } else { nil } }
                #expect(rotated.count == 1, "\(pair)")
                #expect(reused == [session.id], "\(pair)")
                #expect(try await second.session(id: session.id)?.revokedAt == epoch + 60)
            }
            // Every revocation is in the feed once, whichever replica wrote it, numbered without
            // gaps: a transaction run again after a conflict takes no number of its own.
            let (feed, lastSequence) = try await first.revocations(after: 0, now: epoch + 60)
            #expect(Set(feed.map(\.sessionID)) == Set(sessions.map(\.0.id)))
            #expect(feed.count == sessions.count)
            #expect(lastSequence == Int64(sessions.count))
        }
    }

    @Test("a reset link used on two replicas at once sets one password; the other use is invalid", arguments: Backend.allCases)
    func concurrentResetRedemption(backend: Backend) async throws {
        try await withTwoReplicas(backend) { first, second in
            var users: [(UserRecord, tokenHash: String)] = []
            for index in 0..<Self.races {
                let user = try await first.makePasswordUser("user\(index)@example.com")
                let hash = freshHash()
                try await first.issueEmailToken(
                    userID: user.id, purpose: .resetPassword, tokenHash: hash,
                    email: emails.passwordReset(to: user.email, token: "unused"), now: epoch)
                users.append((user, hash))
            }

            let outcomes = try await withThrowingTaskGroup(of: (String, [String?]).self) { group in
                for (user, hash) in users {
                    let now = epoch + 60
                    group.addTask {
                        async let onFirst = first.redeemResetToken(hash: hash, newPasswordHash: "first", now: now)
                        async let onSecond = second.redeemResetToken(hash: hash, newPasswordHash: "second", now: now)
                        return (user.id, [try await onFirst, try await onSecond].map { try? $0.get().0.passwordHash })
                    }
                }
                return try await group.reduce(into: [:]) { outcomes, race in outcomes[race.0] = race.1 }
            }

            for (user, _) in users {
                let passwords = try #require(outcomes[user.id])
                let set = passwords.compactMap { $0 }
                #expect(set.count == 1, "\(passwords)")
                #expect(try await second.user(id: user.id)?.passwordHash == set.first)
            }
        }
    }

    @Test("two reset links issued on two replicas at once leave exactly one usable", arguments: Backend.allCases)
    func concurrentResetIssue(backend: Backend) async throws {
        try await withTwoReplicas(backend) { first, second in
            var users: [(UserRecord, hashes: [String])] = []
            for index in 0..<Self.races {
                users.append((try await first.makePasswordUser("user\(index)@example.com"), [freshHash(), freshHash()]))
            }

            try await withThrowingTaskGroup(of: Void.self) { group in
                for (user, hashes) in users {
                    let email = emails.passwordReset(to: user.email, token: "unused")
                    group.addTask {
                        async let onFirst: Void = first.issueEmailToken(
                            userID: user.id, purpose: .resetPassword, tokenHash: hashes[0], email: email, now: epoch)
                        async let onSecond: Void = second.issueEmailToken(
                            userID: user.id, purpose: .resetPassword, tokenHash: hashes[1], email: email, now: epoch)
                        _ = try await (onFirst, onSecond)
                    }
                }
                try await group.waitForAll()
            }

            for (user, hashes) in users {
                var usable = 0
                for hash in hashes {
                    if case .success = try await second.checkEmailToken(hash: hash, purpose: .resetPassword, now: epoch + 1) {
                        usable += 1
                    }
                }
                #expect(usable == 1, "user \(user.email)")
            }
        }
    }

    @Test("each queued email is sent once, by one of two replicas' outboxes delivering at once", arguments: Backend.allCases)
    func concurrentOutboxes(backend: Backend) async throws {
        try await withTwoReplicas(backend) { first, second in
            var queued: Set<String> = []
            for index in 0..<Self.races {
                let user = try await first.makePasswordUser("user\(index)@example.com")
                try await first.issueEmailToken(
                    userID: user.id, purpose: .verifyEmail, tokenHash: freshHash(),
                    email: emails.verification(to: user.email, token: "unused"), now: Timestamp.now())
                queued.insert(user.email)
            }
            let transports = [RecordingMailTransport(), RecordingMailTransport()]
            let outboxes = zip([first, second], transports).map { store, transport in
                MailOutbox(
                    store: store, transport: transport, sender: "Storefront <no-reply@storefront.test>",
                    logger: Logger(label: "replica-outbox-test") { _ in SwiftLogNoOpLogHandler() },
                    metrics: AuthMetrics(registry: nil))
            }

            await withTaskGroup(of: Void.self) { group in
                for outbox in outboxes { group.addTask { await outbox.deliverDue() } }
            }
            // End each outbox's delivery thread: run() in a cancelled task shuts it down at once.
            await withTaskGroup(of: Void.self) { group in
                group.cancelAll()
                for outbox in outboxes { group.addTask { await outbox.run() } }
            }

            let sent = transports.flatMap(\.delivered).map(\.to.address)
            #expect(sent.count == queued.count, "\(sent)")
            #expect(Set(sent) == queued)
            #expect(try await second.nextEmailDue() == nil)
        }
    }
    /// One sign-in throttle per replica, over its store, with a short delay past the fifth failure.
    private func makeThrottles(_ first: AuthStore, _ second: AuthStore) -> [SignInThrottle] {
        [first, second].map { SignInThrottle(store: $0, delay: .milliseconds(1)) }
    }

    @Test(
        "sign-in failures made through two replicas add up to one lock, which both honour; failures made at once too",
        arguments: Backend.allCases)
    func throttleFailuresAddUp(backend: Backend) async throws {
        try await withTwoReplicas(backend) { first, second in
            let throttles = makeThrottles(first, second)
            // Nine wrong guesses, alternating between the replicas and two addresses.
            for guess in 0..<9 {
                let outcome = try await throttles[guess % 2].attempt(account: "ada@example.com", address: "203.0.113.\(guess % 2)") {
                    false
                }
                #expect(outcome == .failed)
            }
            for throttle in throttles {
                #expect(try await throttle.decide(account: "ada@example.com", address: "198.51.100.1") == .proceed(delay: .milliseconds(1)))
            }
            // The tenth, on either replica, locks the account on both: refused unchecked.
            #expect(try await throttles[1].attempt(account: "ada@example.com", address: "203.0.113.1") { false } == .failed)
            for throttle in throttles {
                let outcome = try await throttle.attempt(account: "ada@example.com", address: "198.51.100.1") {
                    Issue.record("a locked account's password was checked")
                    return true
                }
                #expect(outcome == .refused)
            }

            // Failures recorded at once, five on each replica, still lock each account: the count
            // of the last to commit includes every other (on PostgreSQL, SERIALIZABLE and re-run).
            let accounts = (0..<Self.races).map { "user\($0)@example.com" }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for account in accounts {
                    for guess in 0..<10 {
                        group.addTask {
                            try await throttles[guess % 2].recordFailure(account: account, address: "192.0.2.\(guess)")
                        }
                    }
                }
                try await group.waitForAll()
            }
            for account in accounts {
                for throttle in throttles {
                    #expect(try await throttle.decide(account: account, address: "198.51.100.1") == .refuse, "\(account)")
                }
            }
        }
    }

    @Test(
        "a lock set through one replica is honoured by the other, and a password reset through the other lifts it on both",
        arguments: Backend.allCases)
    func throttleLockHonouredAcrossReplicas(backend: Backend) async throws {
        try await withTwoReplicas(backend) { first, second in
            let throttles = makeThrottles(first, second)
            let user = try await first.makePasswordUser("ada@example.com", verified: true)
            let beforeFailures = SignInThrottle.currentTime()
            for _ in 0..<10 {
                #expect(try await throttles[0].attempt(account: user.email, address: "203.0.113.7") { false } == .failed)
            }
            let refused = try await throttles[1].attempt(account: user.email, address: "198.51.100.1") {
                Issue.record("a locked account's password was checked on the other replica")
                return true
            }
            #expect(refused == .refused)
            // The lock itself, not only the count, is shared: ten failures a minute apart through
            // the first replica; ten minutes after the tenth, half of them have left the window,
            // and the other replica still refuses until fifteen minutes after the tenth.
            for minute in 0..<10 {
                try await throttles[0].recordFailure(
                    account: "grace@example.com", address: "203.0.113.8", now: beforeFailures + Int64(minute) * 60_000)
            }
            let tenth = beforeFailures + 540_000
            #expect(try await throttles[1].decide(account: "grace@example.com", address: "198.51.100.1", now: tenth + 600_000) == .refuse)
            #expect(try await throttles[1].decide(account: "grace@example.com", address: "198.51.100.1", now: tenth + 900_000) != .refuse)

            let token = freshHash()
            try await second.issueEmailToken(
                userID: user.id, purpose: .resetPassword, tokenHash: token,
                email: emails.passwordReset(to: user.email, token: "unused"))
            _ = try await second.redeemResetToken(hash: token, newPasswordHash: "new").get()
            for throttle in throttles {
                #expect(try await throttle.decide(account: user.email, address: "198.51.100.1") == .proceed(delay: .zero))
            }
            #expect(try await throttles[0].attempt(account: user.email, address: "198.51.100.1") { true } == .passed)
        }
    }
}

