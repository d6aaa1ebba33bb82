import Contracts
import Credentials
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// `SignInWithIdToken` with Google and Apple ID tokens minted by the tests' own provider keys
/// (API.md §3 "ID tokens"; README "ID tokens").
@Suite("SignInWithIdToken")
struct IDTokenSignInTests {
    @Test("a Google ID token signs in a new user keyed on its subject", arguments: [true, false])
    func googleNewUser(emailVerified: Bool) async throws {
        try await withAuthService { service in
            let claims = IDTokens.googleClaims(email: "gina@example.com", emailVerified: emailVerified)
            let session = try await service.signIn(with: .google, idToken: try IDTokens.google(claims))
            #expect(session.tokenType == "Bearer")
            #expect(session.user.email == "gina@example.com")
            #expect(session.user.emailVerified == emailVerified)
            #expect(session.user.providers == ["google"])
            #expect(isRFC3339(session.user.createdAt))
            #expect(try await service.currentUser(session) == session.user)
        }
    }

    @Test("Google's issuer is accepted with and without the scheme, as one identity", arguments: [true, false])
    func googleIssuerSpellings(withEmail: Bool) async throws {
        try await withAuthService { service in
            var claims = withEmail ? IDTokens.googleClaims() : IDTokens.googleClaims(email: nil, emailVerified: nil)
            claims.issuer = "accounts.google.com"
            let short = try await service.signIn(with: .google, idToken: try IDTokens.google(claims))
            claims.issuer = "https://accounts.google.com"
            let long = try await service.signIn(with: .google, idToken: try IDTokens.google(claims))
            #expect(short.user.id == long.user.id)
        }
    }

    @Test("the same issuer and subject sign into the same user, even when the email changed")
    func sameSubjectSameUser() async throws {
        try await withAuthService { service in
            let first = try await service.signIn(with: .google, idToken: try IDTokens.google())
            let renamed = IDTokens.googleClaims(email: "gina.new@example.com")
            let second = try await service.signIn(with: .google, idToken: try IDTokens.google(renamed))
            #expect(second.user.id == first.user.id)
            let other = IDTokens.googleClaims(subject: "google-user-2", email: "gus@example.com")
            let third = try await service.signIn(with: .google, idToken: try IDTokens.google(other))
            #expect(third.user.id != first.user.id)
        }
    }

    @Test("a verified Google email links to the verified password account with that email; the password still works")
    func verifiedEmailLinks() async throws {
        try await withAuthService { service in
            try await service.signUpAndVerify("ada@example.com")
            let existing = try await service.signIn("ada@example.com").user
            let claims = IDTokens.googleClaims(email: "Ada@Example.com", emailVerified: true)
            let session = try await service.signIn(with: .google, idToken: try IDTokens.google(claims))
            #expect(session.user.id == existing.id)
            #expect(Set(session.user.providers) == ["password", "google"])
            #expect(try await service.signIn("ada@example.com").user.id == existing.id)
        }
    }

    @Test("a verified Google email takes over an account nobody had proved: the password set at sign-up stops working")
    func verifiedEmailEndsPreHijack() async throws {
        try await withAuthService { service in
            // Someone signs up with Ada's address and a password of theirs, and never verifies.
            let squatter = try await service.signUp("ada@example.com", password: "squatters-password-1")
            let claims = IDTokens.googleClaims(email: "ada@example.com", emailVerified: true)
            let session = try await service.signIn(with: .google, idToken: try IDTokens.google(claims))
            #expect(session.user.id == squatter.id)
            #expect(session.user.providers == ["google"])
            #expect(session.user.emailVerified, "the provider's verified email marks the account verified")
            await expectRPCError(AuthReason.invalidCredentials) {
                try await service.signIn("ada@example.com", password: "squatters-password-1")
            }
        }
    }

    @Test("an unverified Google email that belongs to another account is EMAIL_ALREADY_IN_USE")
    func unverifiedEmailDoesNotLink() async throws {
        try await withAuthService { service in
            try await service.signUpAndVerify("ada@example.com")
            let claims = IDTokens.googleClaims(email: "ada@example.com", emailVerified: false)
            await expectRPCError(AuthReason.emailAlreadyInUse) {
                try await service.signIn(with: .google, idToken: try IDTokens.google(claims))
            }
        }
    }

    @Test("an Apple ID token with the matching raw nonce signs in")
    func appleWithNonce() async throws {
        try await withAuthService { service in
            let claims = IDTokens.appleClaims(rawNonce: "n-0S6_WzA2Mj")
            let session = try await service.signIn(
                with: .apple, idToken: try IDTokens.apple(claims), rawNonce: "n-0S6_WzA2Mj")
            #expect(session.user.providers == ["apple"])
            #expect(session.user.email == "abc@privaterelay.appleid.com")
            let again = try await service.signIn(
                with: .apple, idToken: try IDTokens.apple(claims), rawNonce: "n-0S6_WzA2Mj")
            #expect(again.user.id == session.user.id)
        }
    }

    @Test("an Apple token without a nonce where nonces are not supported signs in without a raw nonce")
    func appleWithoutNonceSupport() async throws {
        try await withAuthService { service in
            let claims = IDTokens.appleClaims(rawNonce: nil, nonceSupported: false)
            let session = try await service.signIn(with: .apple, idToken: try IDTokens.apple(claims))
            #expect(session.user.providers == ["apple"])
        }
    }

    @Test("an Apple nonce mismatch is INVALID_CREDENTIAL", arguments: NonceMismatch.allCases)
    func appleNonceMismatch(mismatch: NonceMismatch) async throws {
        try await withAuthService { service in
            let claims = IDTokens.appleClaims(rawNonce: mismatch.claimNonce, nonceSupported: mismatch.nonceSupported)
            await expectRPCError(AuthReason.invalidCredential) {
                try await service.signIn(with: .apple, idToken: try IDTokens.apple(claims), rawNonce: mismatch.rawNonce)
            }
        }
    }

    @Test("a bad Google ID token is INVALID_CREDENTIAL", arguments: BadGoogleToken.allCases)
    func badGoogleToken(kind: BadGoogleToken) async throws {
        try await withAuthService { service in
            let token = try kind.token()
            await expectRPCError(AuthReason.invalidCredential) {
                try await service.signIn(with: .google, idToken: token)
            }
            #expect(await service.isServing())
        }
    }

    @Test("a token is only good for its own provider: an Apple token sent as Google is INVALID_CREDENTIAL")
    func crossProvider() async throws {
        try await withAuthService { service in
            let apple = try IDTokens.apple(IDTokens.appleClaims(rawNonce: nil, nonceSupported: false))
            await expectRPCError(AuthReason.invalidCredential) {
                try await service.signIn(with: .google, idToken: apple)
            }
            await expectRPCError(AuthReason.invalidCredential) {
                try await service.signIn(with: .apple, idToken: try IDTokens.google())
            }
        }
    }

    @Test(
        "Kakao, Naver and providers nobody configured are UNSUPPORTED_PROVIDER",
        arguments: [IdentityProvider.kakao, .naver, IdentityProvider(rawValue: "facebook")])
    func unsupportedProvider(provider: IdentityProvider) async throws {
        try await withAuthService { service in
            await expectRPCError(AuthReason.unsupportedProvider) {
                try await service.signIn(with: provider, idToken: try IDTokens.google())
            }
        }
    }
}

/// A disagreement between an Apple token's nonce claims and the raw nonce the client sends.
struct NonceMismatch: Sendable, CustomTestStringConvertible {
    /// The raw nonce whose hash the token carries, if any.
    var claimNonce: String?
    /// The token's `nonce_supported`.
    var nonceSupported: Bool
    /// The raw nonce the client sends, if any.
    var rawNonce: String?
    /// What is wrong, for the test report.
    var testDescription: String

    /// Every mismatch auth-svc must refuse.
    static let allCases = [
        NonceMismatch(
            claimNonce: "raw-nonce-1", nonceSupported: true, rawNonce: nil,
            testDescription: "nonce_supported and no raw nonce"),
        NonceMismatch(
            claimNonce: nil, nonceSupported: true, rawNonce: nil,
            testDescription: "nonce_supported, no nonce claim and no raw nonce"),
        NonceMismatch(
            claimNonce: "raw-nonce-1", nonceSupported: true, rawNonce: "another-nonce",
            testDescription: "a raw nonce that does not hash to the claim"),
        NonceMismatch(
            claimNonce: "raw-nonce-1", nonceSupported: false, rawNonce: "raw-nonce-1x",
            testDescription: "a wrong raw nonce where nonces are optional"),
    ]
}
