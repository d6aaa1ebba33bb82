@testable import auth_svc
import Contracts
import RPC
import Testing
import JSON

/// `AuthError` sends exactly the code, reason, message and details API.md and the clients
/// rely on.
@Suite("AuthError: what each refusal sends")
struct AuthErrorTests {
    @Test(
        "a refusal converts to its code, reason and message",
        arguments: [
            (AuthError.wrongEmailOrPassword, RPCCode.unauthenticated, "INVALID_CREDENTIALS", "The email address or password is incorrect."),
            (.wrongCurrentPassword, .unauthenticated, "INVALID_CREDENTIALS", "The current password is incorrect."),
            (.unsupportedProvider(provider: "kakao"), .unimplemented, "UNSUPPORTED_PROVIDER", "Sign-in with kakao is not supported here."),
            (.emailInUseByPasswordAccount, .alreadyExists, "EMAIL_ALREADY_IN_USE",
             "An account with this email address exists; sign in to it with its password."),
            (.accountGone, .unauthenticated, "SESSION_REVOKED", "The account no longer exists."),
            (.expiredLink, .failedPrecondition, "TOKEN_EXPIRED", "The link has expired; ask for a new one."),
            (.tooManyAttempts, .resourceExhausted, "TOO_MANY_ATTEMPTS",
             "Too many failed attempts; try again in 15 minutes, or reset the password by email: a completed reset lifts the lock."),
            (.overloaded, .resourceExhausted, "OVERLOADED", "The server is busy; retry shortly."),
        ] as [(AuthError, RPCCode, String, String)])
    func converts(error: AuthError, code: RPCCode, reason: String, message: String) {
        let sent = RPCError(converting: error)
        #expect(sent.code == code)
        #expect(sent.reason == reason)
        #expect(sent.message == message)
        #expect(sent.details == nil)
    }

    @Test("keys that cannot be had are UNAVAILABLE without a reason")
    func providerKeysUnavailable() {
        let sent = AuthError.providerKeysUnavailable(provider: "google").rpcError
        #expect(sent.code == .unavailable)
        #expect(sent.reason == nil)
        #expect(sent.message == "The keys of google are not available; retry later.")
    }

    @Test("SAME_PASSWORD names the new password as a field violation")
    func samePassword() {
        let sent = AuthError.samePassword.rpcError
        #expect(sent.code == .invalidArgument)
        #expect(sent.reason == "SAME_PASSWORD")
        #expect(sent.message == "The new password is the same as the current one.")
        #expect(sent.details == .object([
            "fieldViolations": .array([
                .object(["field": .string("newPassword"), "description": .string("is the same as the current one")])
            ])
        ]))
    }

    @Test("RATE_LIMITED says how long to wait, in the message and the details, rounded up to seconds")
    func rateLimited() {
        let sent = AuthError.rateLimited(retryAfter: .milliseconds(2_500)).rpcError
        #expect(sent.code == .resourceExhausted)
        #expect(sent.reason == "RATE_LIMITED")
        #expect(sent.message == "Too many requests; try again in 3 s.")
        #expect(sent.details == .object(["retryAfterSeconds": .number(3)]))
    }
}
