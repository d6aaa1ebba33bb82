import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing

/// auth-svc's domain metrics (issue 31): what `/metrics` shows of sign-ups, sign-ins, emails
/// and open `WatchAuthState` streams after the calls that cause them.
@Suite("Auth metrics")
struct AuthMetricsTests {
    /// The series of `auth_sign_ins_total` for `method` and `outcome`.
    static func signIns(_ method: String, _ outcome: String) -> String {
        "auth_sign_ins_total{method=\"\(method)\",outcome=\"\(outcome)\"}"
    }

    /// The series of `auth_mails_total` for `kind` and `outcome`.
    static func mails(_ kind: String, _ outcome: String) -> String {
        "auth_mails_total{kind=\"\(kind)\",outcome=\"\(outcome)\"}"
    }

    /// Waits until `series` reads `value` in `service`'s metrics; returns whether it did.
    static func reaches(_ series: String, _ value: Double, on service: AuthServiceUnderTest) async throws -> Bool {
        try await eventually { try await service.metrics().value(series) == value }
    }

    @Test("SignUp counts the account and its verification email, queued and then sent; a refused sign-up counts nothing")
    func signUpAndVerificationMail() async throws {
        try await withAuthService { service in
            let before = try await service.metrics()
            #expect(before.value("auth_sign_ups_total") == 0)
            #expect(before.value(Self.mails("verification", "queued")) == 0)

            try await service.signUp("ada@example.com")
            await expectRPCError(AuthReason.emailAlreadyInUse) { try await service.signUp("ada@example.com") }
            _ = try await service.latestMail(to: "ada@example.com", kind: .verifyEmail)

            let after = try await service.metrics()
            #expect(after.value("auth_sign_ups_total") == 1)
            #expect(after.value(Self.mails("verification", "queued")) == 1)
            // The file is written before the outbox row goes and the email counts as sent.
            #expect(try await Self.reaches(Self.mails("verification", "sent"), 1, on: service))
            let settled = try await service.metrics()
            #expect(settled.value(Self.mails("verification", "failed")) == 0)
            #expect(settled.value(Self.mails("password_reset", "queued")) == 0)
        }
    }

    @Test("an email the outbox cannot deliver counts as failed, then as sent when a retry gets through")
    func failedDelivery() async throws {
        try await withAuthService { service in
            // A file where the mail directory should be: every delivery fails until it goes.
            let mailDirectory = service.dataDirectory.appendingPathComponent("mail")
            try? FileManager.default.removeItem(at: mailDirectory)
            try Data().write(to: mailDirectory)
            try await service.signUp("ada@example.com")
            #expect(try await eventually { (try await service.metrics().value(Self.mails("verification", "failed")) ?? 0) >= 1 })
            #expect(try await service.metrics().value(Self.mails("verification", "sent")) == 0)

            try FileManager.default.removeItem(at: mailDirectory)
            // The first retry comes a second after the failure.
            #expect(try await eventually(within: .seconds(10)) {
                try await service.metrics().value(Self.mails("verification", "sent")) == 1
            })
            #expect(service.mails(to: "ada@example.com", kind: .verifyEmail).count == 1)
        }
    }

    @Test("password sign-ins are counted by outcome; a malformed request decides nothing and is not counted")
    func passwordSignIns() async throws {
        try await withAuthService { service in
            try await service.signUp("ada@example.com")
            await expectRPCError(AuthReason.emailNotVerified) { try await service.signIn("ada@example.com") }
            try await service.verifyLatestMail(to: "ada@example.com")
            _ = try await service.signIn("ada@example.com")
            await expectRPCError(AuthReason.invalidCredentials) {
                try await service.signIn("ada@example.com", password: "not-the-password-9")
            }
            await expectRPCError(AuthReason.invalidCredentials) { try await service.signIn("nobody@example.com") }
            await expectRPCError(.invalidArgument) {
                try await service.signIn(String(repeating: "a", count: 400) + "@example.com")
            }

            let metrics = try await service.metrics()
            #expect(metrics.value(Self.signIns("password", "success")) == 1)
            #expect(metrics.value(Self.signIns("password", "invalid_credentials")) == 2)
            #expect(metrics.value(Self.signIns("password", "email_not_verified")) == 1)
            #expect(metrics.value(Self.signIns("password", "too_many_attempts")) == 0)
            // The sign-in refused as unverified queued a new link.
            #expect(metrics.value(Self.mails("verification", "queued")) == 2)
        }
    }

    @Test("ID-token sign-ins are counted under their provider: success, a bad token, an email owned by a password account")
    func idTokenSignIns() async throws {
        try await withAuthService { service in
            _ = try await service.signIn(with: .google, idToken: try IDTokens.google())
            _ = try await service.signIn(with: .apple, idToken: try IDTokens.apple(), rawNonce: "raw-nonce-1")
            await expectRPCError(AuthReason.invalidCredential) {
                try await service.signIn(with: .google, idToken: try BadGoogleToken.expired.token())
            }
            try await service.signUpAndVerify("ada@example.com")
            await expectRPCError(AuthReason.emailAlreadyInUse) {
                let claims = IDTokens.googleClaims(subject: "google-ada", email: "ada@example.com", emailVerified: false)
                return try await service.signIn(with: .google, idToken: try IDTokens.google(claims))
            }

            let metrics = try await service.metrics()
            #expect(metrics.value(Self.signIns("google", "success")) == 1)
            #expect(metrics.value(Self.signIns("apple", "success")) == 1)
            #expect(metrics.value(Self.signIns("google", "invalid_credentials")) == 1)
            #expect(metrics.value(Self.signIns("google", "email_in_use")) == 1)
            #expect(metrics.value(Self.signIns("password", "success")) == 0)
            #expect(metrics.value("auth_sign_ups_total") == 1)
        }
    }

    @Test("auth_watchers_open counts a WatchAuthState stream while it waits, and drops it when its session ends")
    func watchersOpen() async throws {
        try await withAuthService { service in
            let session = try await service.verifiedSession("ada@example.com")
            #expect(try await service.metrics().value("auth_watchers_open") == 0)
            let (whileOpen, _) = try await service.watchingAuthState(of: session) { messages in
                var iterator = messages.makeAsyncIterator()
                _ = await iterator.next()
                let open = try await service.metrics().value("auth_watchers_open")
                try await service.signOut(session, scope: .local)  // ends the stream
                while await iterator.next() != nil {}
                return open
            }
            #expect(whileOpen == 1)
            #expect(try await Self.reaches("auth_watchers_open", 0, on: service))
        }
    }
}
