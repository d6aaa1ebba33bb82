@testable import auth_svc
import Contracts
import RPC
import Testing

/// How `auth_sign_ins_total` names the end of a refused sign-in: by the API.md reason of what
/// the handler threw, whether it threw an ``AuthError`` or the ``RPCError`` made of one.
@Suite("Sign-in outcomes for metrics")
struct SignInOutcomeTests {
    @Test(
        "a refusal about the credentials has its outcome",
        arguments: [
            (AuthError.wrongEmailOrPassword, AuthMetrics.SignInOutcome.invalidCredentials),
            (.invalidIDToken, .invalidCredentials),
            (.nonceMismatch, .invalidCredentials),
            (.emailNotVerified, .emailNotVerified),
            (.tooManyAttempts, .tooManyAttempts),
            (.emailInUseByPasswordAccount, .emailInUse),
        ])
    func refusals(error: AuthError, outcome: AuthMetrics.SignInOutcome) {
        #expect(AuthMetrics.SignInOutcome(refusal: error) == outcome)
        #expect(AuthMetrics.SignInOutcome(refusal: error.rpcError) == outcome)
    }

    @Test(
        "a failure that decided nothing about the credentials has none",
        arguments: [
            AuthError.overloaded.rpcError, AuthError.unsupportedProvider(provider: "kakao").rpcError,
            AuthError.providerKeysUnavailable(provider: "google").rpcError,
            RPCError(code: .invalidArgument, message: "email: must be at most 254 bytes"),
            RPCError(code: .internal, message: "Internal error."),
        ])
    func others(error: RPCError) {
        #expect(AuthMetrics.SignInOutcome(refusal: error) == nil)
    }

    @Test("a cancelled sign-in has no outcome")
    func cancelled() {
        #expect(AuthMetrics.SignInOutcome(refusal: CancellationError()) == nil)
    }
}
