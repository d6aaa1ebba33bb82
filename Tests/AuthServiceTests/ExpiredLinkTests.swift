import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// `TOKEN_EXPIRED` for verification and reset links. Their lifetimes (24 h, 1 h) are too long
/// to wait out, so the test ages the stored token instead: it sets `expires_at` in the past in
/// the running service's own database from outside (`sqlite3`, or `psql` on PostgreSQL:
/// ``AuthServiceUnderTest/runSQL(_:)``), exactly the state a day-old link leaves behind.
@Suite("Expired links")
struct ExpiredLinkTests {
    /// Makes the unused tokens for `purpose` expire a second ago, in the service's database.
    func age(_ service: AuthServiceUnderTest, purpose: String) async throws {
        let past = Int64(Date().timeIntervalSince1970) - 1
        try await service.runSQL("UPDATE email_tokens SET expires_at = \(past) WHERE purpose = '\(purpose)'")
    }

    @Test("a verification link past its 24 hours is TOKEN_EXPIRED, and a new one works")
    func verificationExpired() async throws {
        try await withAuthService { service in
            let email = "late-\(UUID().uuidString.prefix(8).lowercased())@example.com"
            try await service.signUp(email)
            let token = try await service.latestToken(to: email, kind: .verifyEmail)
            try await age(service, purpose: "verify-email")
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
            try await age(service, purpose: "reset-password")
            await expectRPCError(AuthReason.tokenExpired) {
                try await service.client.unary(
                    AuthContract.resetPassword, ResetPasswordRequest(token: token, newPassword: Passwords.replacement),
                    options: service.options())
            }
            _ = try await service.signIn(email)
        }
    }
}
