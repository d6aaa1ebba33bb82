import Contracts
import Credentials
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// `SignIn` with email and password: the session it answers, and its refusals (API.md §3).
@Suite("SignIn")
struct SignInTests {
    @Test("a sign-in answers a Bearer session of 900 seconds for the verified user")
    func sessionShape() async throws {
        try await withAuthService { service in
            let user = try await service.signUpAndVerify("ada@example.com", displayName: "Ada")
            let session = try await service.signIn("ADA@example.com")
            #expect(session.tokenType == "Bearer")
            #expect(session.expiresIn == 900)
            #expect(session.user == user)
            #expect(!session.refreshToken.isEmpty)
            #expect(session.refreshToken != session.accessToken)
            #expect(try await service.currentUser(session) == user)
        }
    }

    @Test("the access token is a JWT with a kid, EdDSA or ES256, that verifies with the GetJwks keys")
    func accessTokenVerifies() async throws {
        try await withAuthService { service in
            let session = try await service.verifiedSession("ada@example.com")
            let header = try #require(CompactToken.header(of: session.accessToken))
            #expect(["EdDSA", "ES256"].contains(header.alg))
            let kid = try #require(header.kid)
            let verifier = try await service.accessTokenVerifier()
            #expect(verifier.keyIDs.contains(kid))
            let claims = try verifier.verifyAccessToken(session.accessToken)
            #expect(claims.issuer == AuthServiceUnderTest.issuer)
            #expect(claims.audience == AuthServiceUnderTest.audience)
            #expect(claims.subject == session.user.id)
            #expect(!claims.sessionID.isEmpty)
            #expect(claims.email == "ada@example.com")
            #expect(claims.emailVerified)
            #expect(claims.expiresAt.timeIntervalSince(claims.issuedAt) == 900)
            #expect(abs(claims.issuedAt.timeIntervalSinceNow) < 120)
        }
    }

    @Test("two sign-ins are two sessions with different session ids")
    func separateSessions() async throws {
        try await withAuthService { service in
            let first = try await service.verifiedSession("ada@example.com")
            let second = try await service.signIn("ada@example.com")
            let sessionIDs = [first, second].compactMap { CompactToken.accessClaims(of: $0.accessToken)?.sessionID }
            #expect(sessionIDs.count == 2)
            #expect(Set(sessionIDs).count == 2)
            #expect(first.refreshToken != second.refreshToken)
        }
    }

    @Test("an unknown email and a wrong password get the same INVALID_CREDENTIALS answer")
    func invalidCredentialsAlike() async throws {
        try await withAuthService { service in
            try await service.signUpAndVerify("ada@example.com")
            let unknown = await expectRPCError(AuthReason.invalidCredentials) {
                try await service.signIn("nobody@example.com")
            }
            let wrong = await expectRPCError(AuthReason.invalidCredentials) {
                try await service.signIn("ada@example.com", password: Passwords.replacement)
            }
            #expect(unknown?.message == wrong?.message)
            #expect(unknown?.details == wrong?.details)
        }
    }

    @Test("an unverified account gets EMAIL_NOT_VERIFIED and a new verification email")
    func emailNotVerified() async throws {
        try await withAuthService { service in
            try await service.signUp("ada@example.com")
            await service.waitForMails(to: "ada@example.com", kind: .verifyEmail, count: 1)
            await expectRPCError(AuthReason.emailNotVerified) {
                try await service.signIn("ada@example.com")
            }
            let mails = await service.waitForMails(to: "ada@example.com", kind: .verifyEmail, count: 2)
            let token = try #require(mails.last?.token)
            _ = try await service.client.unary(AuthContract.verifyEmail, VerifyEmailRequest(token: token), options: service.options())
            #expect(try await service.signIn("ada@example.com").user.emailVerified)
        }
    }

    @Test("an unverified account with a wrong password is INVALID_CREDENTIALS, not EMAIL_NOT_VERIFIED")
    func unverifiedWrongPassword() async throws {
        try await withAuthService { service in
            try await service.signUp("ada@example.com")
            await expectRPCError(AuthReason.invalidCredentials) {
                try await service.signIn("ada@example.com", password: Passwords.replacement)
            }
        }
    }
}
