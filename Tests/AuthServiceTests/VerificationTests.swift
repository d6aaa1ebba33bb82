import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// `VerifyEmail` and `ResendVerification` (API.md §3; README "Mail", "Rate limits").
///
/// `TOKEN_EXPIRED` is not covered here: verification tokens live 24 hours and auth-svc has no
/// flag or clock to shorten that, so a live test cannot reach it.
@Suite("VerifyEmail and ResendVerification")
struct VerificationTests {
    @Test("the token from the verification email verifies the address")
    func verifies() async throws {
        try await withAuthService { service in
            let created = try await service.signUp("ada@example.com")
            let verified = try await service.verifyLatestMail(to: "ada@example.com")
            #expect(verified.id == created.id)
            #expect(verified.emailVerified)
            let session = try await service.signIn("ada@example.com")
            #expect(session.user.emailVerified)
        }
    }

    @Test("an unknown verification token is INVALID_TOKEN", arguments: ["no-such-token", String(repeating: "A", count: 43)])
    func unknownToken(token: String) async throws {
        try await withAuthService { service in
            await expectRPCError(AuthReason.invalidToken) {
                try await service.client.unary(AuthContract.verifyEmail, VerifyEmailRequest(token: token), options: service.options())
            }
        }
    }

    @Test("a verification token works once; the second use is INVALID_TOKEN")
    func singleUse() async throws {
        try await withAuthService { service in
            try await service.signUp("ada@example.com")
            let token = try await service.latestToken(to: "ada@example.com", kind: .verifyEmail)
            _ = try await service.client.unary(AuthContract.verifyEmail, VerifyEmailRequest(token: token), options: service.options())
            await expectRPCError(AuthReason.invalidToken) {
                try await service.client.unary(AuthContract.verifyEmail, VerifyEmailRequest(token: token), options: service.options())
            }
        }
    }

    @Test("a password-reset token does not verify an address")
    func resetTokenIsNotAVerificationToken() async throws {
        try await withAuthService { service in
            try await service.signUp("ada@example.com")
            _ = try await service.client.unary(
                AuthContract.requestPasswordReset, RequestPasswordResetRequest(email: "ada@example.com"), options: service.options())
            let token = try await service.latestToken(to: "ada@example.com", kind: .resetPassword)
            await expectRPCError(AuthReason.invalidToken) {
                try await service.client.unary(AuthContract.verifyEmail, VerifyEmailRequest(token: token), options: service.options())
            }
        }
    }

    @Test("ResendVerification answers {} alike for unknown and known addresses", arguments: [
        "nobody@example.com", "ada@example.com",
    ])
    func resendAnswersAlike(email: String) async throws {
        try await withAuthService { service in
            try await service.signUp("ada@example.com")
            let answer = try await service.client.unary(
                AuthContract.resendVerification, ResendVerificationRequest(email: email), options: service.options())
            #expect(answer == Empty())
        }
    }

    @Test("ResendVerification sends a new email to a known unverified address, whose token verifies it")
    func resendSendsNewMail() async throws {
        try await withAuthService { service in
            try await service.signUp("ada@example.com")
            await service.waitForMails(to: "ada@example.com", kind: .verifyEmail, count: 1)
            _ = try await service.client.unary(
                AuthContract.resendVerification, ResendVerificationRequest(email: "ADA@example.com"), options: service.options())
            let mails = await service.waitForMails(to: "ada@example.com", kind: .verifyEmail, count: 2)
            let token = try #require(mails.last?.token)
            let user = try await service.client.unary(
                AuthContract.verifyEmail, VerifyEmailRequest(token: token), options: service.options()
            ).user
            #expect(user.emailVerified)
        }
    }

    @Test("ResendVerification for an unknown address sends nothing")
    func resendUnknownSendsNothing() async throws {
        try await withAuthService { service in
            _ = try await service.client.unary(
                AuthContract.resendVerification, ResendVerificationRequest(email: "nobody@example.com"),
                options: service.options())
            #expect(await service.settledMailCount(to: "nobody@example.com", kind: .verifyEmail) == 0)
        }
    }

    @Test("five resends from one address pass and the sixth is RATE_LIMITED")
    func resendRateLimitedPerAddress() async throws {
        try await withAuthService { service in
            for index in 1...5 {
                _ = try await service.client.unary(
                    AuthContract.resendVerification, ResendVerificationRequest(email: "user\(index)@example.com"),
                    options: service.options())
            }
            await expectRPCError(AuthReason.rateLimited) {
                try await service.client.unary(
                    AuthContract.resendVerification, ResendVerificationRequest(email: "user6@example.com"),
                    options: service.options())
            }
        }
    }

    @Test("the per-email limit answers {} silently and sends at most three new emails")
    func resendLimitedPerEmailSilently() async throws {
        try await withAuthService { service in
            try await service.signUp("ada@example.com")
            let before = await service.waitForMails(to: "ada@example.com", kind: .verifyEmail, count: 1).count
            for _ in 1...5 {
                let answer = try await service.client.unary(
                    AuthContract.resendVerification, ResendVerificationRequest(email: "ada@example.com"),
                    options: service.options())
                #expect(answer == Empty())
            }
            await service.waitForMails(to: "ada@example.com", kind: .verifyEmail, count: before + 1)
            let after = await service.settledMailCount(to: "ada@example.com", kind: .verifyEmail)
            #expect((before + 1...before + 3).contains(after), "\(after - before) new emails")
        }
    }
}
