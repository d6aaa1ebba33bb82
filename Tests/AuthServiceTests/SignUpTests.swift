import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// `SignUp` over a real socket (API.md §3; README "Choices where API.md is silent").
@Suite("SignUp")
struct SignUpTests {
    @Test("a sign-up creates an unverified password account and answers it")
    func createsUnverifiedAccount() async throws {
        try await withAuthService { service in
            let user = try await service.signUp("ada@example.com", displayName: "Ada Lovelace")
            #expect(!user.id.isEmpty)
            #expect(user.email == "ada@example.com")
            #expect(user.emailVerified == false)
            #expect(user.displayName == "Ada Lovelace")
            #expect(user.providers == ["password"])
            #expect(isRFC3339(user.createdAt), "createdAt \(user.createdAt) is not RFC 3339")
        }
    }

    @Test("an email address is stored trimmed and lower-cased")
    func normalizesEmail() async throws {
        try await withAuthService { service in
            let user = try await service.signUp("  Ada.Lovelace@Example.COM ")
            #expect(user.email == "ada.lovelace@example.com")
        }
    }

    @Test("a sign-up sends a verification email with a link and its token")
    func sendsVerificationEmail() async throws {
        try await withAuthService { service in
            try await service.signUp("ada@example.com")
            let mail = try await service.latestMail(to: "ada@example.com", kind: .verifyEmail)
            let token = try #require(mail.token, "no Token: line in \(mail)")
            #expect(token.count >= 22, "a token of at least 128 bits is at least 22 base64 characters")
            #expect(mail.body.contains("\(AuthServiceUnderTest.linkBaseURL)/verify-email?token=\(token)"))
            #expect(mail.header("From") != nil)
            #expect(mail.header("Subject") != nil)
        }
    }

    @Test(
        "a malformed email address is refused with INVALID_EMAIL naming the field",
        arguments: [
            "", "ada", "ada@", "@example.com", "ada@example", "ada@@example.com", "ada@b@example.com",
            "ada lovelace@example.com", "ada@exa mple.com", "ada\u{7}@example.com",
            String(repeating: "a", count: 243) + "@example.com",
        ])
    func invalidEmail(email: String) async throws {
        try await withAuthService { service in
            let error = await expectRPCError(AuthReason.invalidEmail) {
                try await service.signUp(email)
            }
            #expect(error?.violatedFields == ["email"])
            #expect(error?.message.hasPrefix("The email address ") == true, "\(String(describing: error))")
        }
    }

    @Test(
        "a weak password is refused with WEAK_PASSWORD naming the field",
        arguments: [
            ("seven!!", "shorter than 8 characters"),
            (String(repeating: "x7", count: 128) + "y", "longer than 256 characters"),
            ("ada@example.com", "equal to the email address"),
            ("password123", "a common password"),
            ("qwertyuiop", "a common password"),
        ])
    func weakPassword(password: String, why: String) async throws {
        try await withAuthService { service in
            let error = await expectRPCError(AuthReason.weakPassword) {
                try await service.signUp("ada@example.com", password: password)
            }
            #expect(error?.violatedFields == ["password"], "\(why)")
            // In the user's words: "The password must …", never "password: …".
            #expect(error?.message.hasPrefix("The password ") == true, "\(String(describing: error))")
            #expect(service.mails(to: "ada@example.com", kind: .verifyEmail).isEmpty)
        }
    }

    @Test(
        "passwords at the policy's edges are accepted",
        arguments: ["zq8#Lm2w", String(repeating: "k9", count: 128), "пароль-который-длинный", "🐈🐈🐈🐈🐈🐈🐈🐈"])
    func acceptablePassword(password: String) async throws {
        try await withAuthService { service in
            try await service.signUpAndVerify("ada@example.com", password: password)
            let session = try await service.signIn("ada@example.com", password: password)
            #expect(session.user.email == "ada@example.com")
        }
    }

    @Test("a second sign-up with the same address, in any letter case, is EMAIL_ALREADY_IN_USE", arguments: [
        "ada@example.com", "ADA@Example.com",
    ])
    func emailAlreadyInUse(again: String) async throws {
        try await withAuthService { service in
            try await service.signUp("ada@example.com")
            await expectRPCError(AuthReason.emailAlreadyInUse) {
                try await service.signUp(again, password: Passwords.replacement)
            }
        }
    }

    @Test("an address that was taken by an ID-token sign-up cannot be signed up again")
    func emailTakenByGoogle() async throws {
        try await withAuthService { service in
            let claims = IDTokens.googleClaims(email: "gina@example.com", emailVerified: true)
            _ = try await service.signIn(with: .google, idToken: try IDTokens.google(claims))
            await expectRPCError(AuthReason.emailAlreadyInUse) {
                try await service.signUp("gina@example.com")
            }
        }
    }

    @Test("ten quick sign-ups from one address pass and the eleventh is RATE_LIMITED")
    func rateLimited() async throws {
        try await withAuthService { service in
            for index in 1...10 {
                try await service.signUp("user\(index)@example.com")
            }
            await expectRPCError(AuthReason.rateLimited) {
                try await service.signUp("user11@example.com")
            }
        }
    }

    @Test("the sign-up limit is per client address, taken from x-forwarded-for only with the internal key")
    func rateLimitPerForwardedAddress() async throws {
        try await withAuthService { service in
            for index in 1...10 {
                try await service.signUp(
                    "user\(index)@example.com", options: service.internalOptions(forwardedFor: "203.0.113.7"))
            }
            await expectRPCError(AuthReason.rateLimited) {
                try await service.signUp(
                    "user11@example.com", options: service.internalOptions(forwardedFor: "203.0.113.7"))
            }
            // Another forwarded address has its own bucket…
            try await service.signUp(
                "user12@example.com", options: service.internalOptions(forwardedFor: "198.51.100.9"))
            // …but without the internal key the header is ignored: every call counts for the peer.
            let spoofed = CallOptions(metadata: ["x-forwarded-for": "192.0.2.1"], timeout: .seconds(15))
            for index in 13...22 {
                try await service.signUp("user\(index)@example.com", options: spoofed)
            }
            await expectRPCError(AuthReason.rateLimited) {
                try await service.signUp(
                    "user23@example.com",
                    options: CallOptions(metadata: ["x-forwarded-for": "192.0.2.2"], timeout: .seconds(15)))
            }
        }
    }
}
