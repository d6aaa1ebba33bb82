import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// `TOKEN_EXPIRED` for verification and reset links. Their lifetimes (24 h, 1 h) are too long
/// to wait out, so the test ages the stored token instead: it sets `expires_at` in the past in
/// the running service's own database with the `sqlite3` shell (WAL mode lets a second process
/// write), exactly the state a day-old link leaves behind.
@Suite("Expired links")
struct ExpiredLinkTests {
    /// Runs `sql` against the service's database with the `sqlite3` command-line shell.
    func age(_ service: AuthServiceUnderTest, sql: String) async throws {
        let database = service.dataDirectory.appendingPathComponent("auth.sqlite").path
        let shell = try await Command.run("sqlite3", ["-cmd", ".timeout 5000", database, sql], timeout: .seconds(30))
        try #require(shell.status == 0, "sqlite3 failed; is it installed (Debian sqlite3)? \(shell)")
    }

    @Test("a verification link past its 24 hours is TOKEN_EXPIRED, and a new one works")
    func verificationExpired() async throws {
        try await withAuthService { service in
            let email = "late-\(UUID().uuidString.prefix(8).lowercased())@example.com"
            try await service.signUp(email)
            let token = try await service.latestToken(to: email, kind: .verifyEmail)
            try await age(service, sql: "UPDATE email_tokens SET expires_at = strftime('%s','now') - 1 WHERE purpose = 'verify-email'")
            await expectRPCError(AuthReason.tokenExpired) {
                try await service.client.unary(AuthContract.verifyEmail, VerifyEmailRequest(token: token), options: service.options())
            }
            _ = try await service.client.unary(
                AuthContract.resendVerification, ResendVerificationRequest(email: email), options: service.options())
            await service.waitForMails(to: email, kind: .verifyEmail, count: 2)
            let user = try await service.verifyLatestMail(to: email)
            #expect(user.emailVerified)
        }
    }

    @Test("a reset link past its hour is TOKEN_EXPIRED and the password stays as it was")
    func resetExpired() async throws {
        try await withAuthService { service in
            let email = "late-\(UUID().uuidString.prefix(8).lowercased())@example.com"
            try await service.signUpAndVerify(email)
            _ = try await service.client.unary(
                AuthContract.requestPasswordReset, RequestPasswordResetRequest(email: email), options: service.options())
            let token = try await service.latestToken(to: email, kind: .resetPassword)
            try await age(service, sql: "UPDATE email_tokens SET expires_at = strftime('%s','now') - 1 WHERE purpose = 'reset-password'")
            await expectRPCError(AuthReason.tokenExpired) {
                try await service.client.unary(
                    AuthContract.resetPassword, ResetPasswordRequest(token: token, newPassword: Passwords.replacement),
                    options: service.options())
            }
            _ = try await service.signIn(email)
        }
    }
}
