@testable import auth_svc
import Credentials
import Testing

/// `AuthStore`'s single-use verification and reset tokens, password changes, and the outbox
/// rows their emails wait in.
@Suite("AuthStore: email tokens, passwords and the outbox")
struct AuthStoreEmailTokenTests {
    private let epoch = AuthStore.testEpoch
    private let emails = AuthEmails(linkBaseURL: "https://shop.test")

    /// Issues a token of `purpose` for `user` at `now`, queueing its email; returns the hash.
    private func issue(
        _ purpose: EmailTokenPurpose, for user: UserRecord, in store: AuthStore, now: Int64
    ) async throws -> String {
        let token = OpaqueToken.generate()
        let email =
            purpose == .verifyEmail
            ? emails.verification(to: user.email, token: token) : emails.passwordReset(to: user.email, token: token)
        let hash = OpaqueToken.hash(token)
        try await store.issueEmailToken(userID: user.id, purpose: purpose, tokenHash: hash, email: email, now: now)
        return hash
    }

    @Test("issuing a token queues its email in the outbox, due at once")
    func issueQueuesEmail() async throws {
        try await AuthStore.withFresh { store in
            let user = try await store.makePasswordUser("ada@example.com")
            _ = try await issue(.verifyEmail, for: user, in: store, now: epoch)

            let due = try await store.dueEmails(now: epoch)
            #expect(due.count == 1)
            let entry = try #require(due.first)
            #expect(entry.email.recipient == "ada@example.com")
            #expect(entry.email.kind == .verifyEmail)
            #expect(entry.email.body.contains("https://shop.test/verify-email?token="))
            #expect(entry.attempts == 0)
            #expect(try await store.nextEmailDue() == epoch)
        }
    }

    @Test("a verification token verifies the address once; the second use is invalid")
    func verifyOnce() async throws {
        try await AuthStore.withFresh { store in
            let user = try await store.makePasswordUser("ada@example.com")
            let hash = try await issue(.verifyEmail, for: user, in: store, now: epoch)

            let (verified, _) = try await store.redeemVerificationToken(hash: hash, now: epoch + 60).get()
            #expect(verified.id == user.id)
            #expect(verified.emailVerified)
            #expect(try await store.redeemVerificationToken(hash: hash, now: epoch + 61).problem == .invalid)
        }
    }

    @Test(
        "a link that proves the address drops identities linked without proof of it, with every session",
        arguments: [EmailTokenPurpose.verifyEmail, .resetPassword])
    func provingDropsUnprovenIdentities(purpose: EmailTokenPurpose) async throws {
        try await AuthStore.withFresh { store in
            // A provider account claimed the address without vouching for it and made the account.
            let (claimed, _) = try await store.userForIdentity(
                provider: "google", issuer: "https://accounts.google.com", subject: "g-claims", email: "ada@example.com",
                emailVerified: false, now: epoch)
            let (session, _) = try await store.makeSession(for: claimed.id)
            let hash = try await issue(purpose, for: claimed, in: store, now: epoch)

            let proved: UserRecord
            let revoked: [String]
            if purpose == .verifyEmail {
                (proved, revoked) = try await store.redeemVerificationToken(hash: hash, now: epoch + 60).get()
            } else {
                (proved, revoked) = try await store.redeemResetToken(hash: hash, newPasswordHash: "$scrypt$new", now: epoch + 60).get()
            }
            #expect(proved.emailVerified && proved.providers == (purpose == .verifyEmail ? [] : ["password"]))
            #expect(revoked == [session.id])
            #expect(try await store.user(issuer: "https://accounts.google.com", subject: "g-claims") == nil)
            #expect(try await store.session(id: session.id)?.revokedAt == epoch + 60)
            // An identity that vouched for the address is kept.
            let (vouched, _) = try await store.userForIdentity(
                provider: "apple", issuer: "https://appleid.apple.com", subject: "a-1", email: "bob@example.com",
                emailVerified: true, now: epoch)
            let again = try await issue(purpose, for: vouched, in: store, now: epoch)
            if purpose == .verifyEmail {
                #expect(try await store.redeemVerificationToken(hash: again, now: epoch + 60).get().revoked.isEmpty)
            } else {
                _ = try await store.redeemResetToken(hash: again, newPasswordHash: "$scrypt$new", now: epoch + 60).get()
            }
            #expect(try await store.user(issuer: "https://appleid.apple.com", subject: "a-1")?.id == vouched.id)
        }
    }

    @Test("pruning drops tokens a month past their expiry, used or not, and keeps the rest")
    func prune() async throws {
        try await AuthStore.withFresh { store in
            let user = try await store.makePasswordUser("ada@example.com")
            let old = try await issue(.verifyEmail, for: user, in: store, now: epoch)
            let oldUsed = try await issue(.resetPassword, for: user, in: store, now: epoch)
            _ = try await store.redeemResetToken(hash: oldUsed, newPasswordHash: "x", now: epoch + 60)
            let recent = try await issue(.verifyEmail, for: user, in: store, now: epoch + 20 * 24 * 3600)

            let now = epoch + 24 * 3600 + AuthStore.expiredTokenRetention + 1  // `old` expired a month and a second ago
            #expect(try await store.checkEmailToken(hash: old, purpose: .verifyEmail, now: now) == .failure(.expired))
            try await store.pruneEmailTokens(now: now)
            #expect(try await store.checkEmailToken(hash: old, purpose: .verifyEmail, now: now) == .failure(.invalid))
            #expect(try await store.emailTokenCount() == 1)
            #expect(try await store.checkEmailToken(hash: recent, purpose: .verifyEmail, now: now) == .failure(.expired))
        }
    }

    @Test("tokens expire: verification after 24 hours, reset after one hour")
    func expiry() async throws {
        try await AuthStore.withFresh { store in
            let user = try await store.makePasswordUser("ada@example.com")
            let verify = try await issue(.verifyEmail, for: user, in: store, now: epoch)
            let reset = try await issue(.resetPassword, for: user, in: store, now: epoch)

            #expect(try await store.checkEmailToken(hash: verify, purpose: .verifyEmail, now: epoch + 24 * 3600 - 1)
                == .success(user.id))
            #expect(try await store.redeemVerificationToken(hash: verify, now: epoch + 24 * 3600).problem == .expired)
            let late = try await store.redeemResetToken(hash: reset, newPasswordHash: "new", now: epoch + 3600)
            #expect(late.problem == .expired)
            #expect(try await store.user(id: user.id)?.passwordHash == "$scrypt$test-hash")
        }
    }

    @Test("a token is only good for its own purpose")
    func wrongPurpose() async throws {
        try await AuthStore.withFresh { store in
            let user = try await store.makePasswordUser("ada@example.com")
            let verify = try await issue(.verifyEmail, for: user, in: store, now: epoch)
            let attempt = try await store.redeemResetToken(hash: verify, newPasswordHash: "new", now: epoch + 1)
            #expect(attempt.problem == .invalid)
        }
    }

    @Test("a newer reset token invalidates the older one")
    func newerResetWins() async throws {
        try await AuthStore.withFresh { store in
            let user = try await store.makePasswordUser("ada@example.com")
            let older = try await issue(.resetPassword, for: user, in: store, now: epoch)
            let newer = try await issue(.resetPassword, for: user, in: store, now: epoch + 10)
            #expect(try await store.checkEmailToken(hash: older, purpose: .resetPassword, now: epoch + 20) == .failure(.invalid))
            #expect(try await store.checkEmailToken(hash: newer, purpose: .resetPassword, now: epoch + 20) == .success(user.id))
        }
    }

    @Test("redeeming a reset token sets the password, verifies the email and revokes every session")
    func redeemReset() async throws {
        try await AuthStore.withFresh { store in
            let user = try await store.makePasswordUser("ada@example.com")
            let (first, _) = try await store.makeSession(for: user.id)
            let (second, _) = try await store.makeSession(for: user.id)
            let hash = try await issue(.resetPassword, for: user, in: store, now: epoch)

            let (updated, revoked) = try await store.redeemResetToken(hash: hash, newPasswordHash: "new", now: epoch + 60).get()
            #expect(updated.passwordHash == "new")
            #expect(updated.emailVerified)
            #expect(Set(revoked) == [first.id, second.id])
            #expect(try await store.session(id: first.id)?.revokedAt == epoch + 60)
            let again = try await store.redeemResetToken(hash: hash, newPasswordHash: "newer", now: epoch + 61)
            #expect(again.problem == .invalid)
        }
    }

    @Test("changing the password keeps the given session, revokes the rest and voids reset links")
    func changePassword() async throws {
        try await AuthStore.withFresh { store in
            let user = try await store.makePasswordUser("ada@example.com")
            let (kept, _) = try await store.makeSession(for: user.id)
            let (other, _) = try await store.makeSession(for: user.id)
            let reset = try await issue(.resetPassword, for: user, in: store, now: epoch)

            let revoked = try await store.changePassword(
                userID: user.id, newPasswordHash: "changed", keeping: kept.id, now: epoch + 5)
            #expect(revoked == [other.id])
            #expect(try await store.session(id: kept.id)?.revokedAt == nil)
            #expect(try await store.user(id: user.id)?.passwordHash == "changed")
            #expect(try await store.checkEmailToken(hash: reset, purpose: .resetPassword, now: epoch + 6) == .failure(.invalid))
        }
    }

    @Test("a failed email waits until its retry time; a delivered one leaves the outbox")
    func outboxLifecycle() async throws {
        try await AuthStore.withFresh { store in
            let user = try await store.makePasswordUser("ada@example.com")
            _ = try await issue(.verifyEmail, for: user, in: store, now: epoch)
            let entry = try #require(try await store.dueEmails(now: epoch).first)

            try await store.markFailed(outboxID: entry.id, error: "cannot connect", retryAt: epoch + 30)
            #expect(try await store.dueEmails(now: epoch + 29).isEmpty)
            #expect(try await store.nextEmailDue() == epoch + 30)
            let retry = try #require(try await store.dueEmails(now: epoch + 30).first)
            #expect(retry.id == entry.id)
            #expect(retry.attempts == 1)

            try await store.removeEmail(outboxID: entry.id)
            #expect(try await store.dueEmails(now: epoch + 3600).isEmpty)
            #expect(try await store.nextEmailDue() == nil)
        }
    }
}

extension Result {
    /// The error of a failed result, or nil: for comparing results whose success is not `Equatable`.
    fileprivate var problem: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
