import Contracts
import RPC

extension AuthService {
    /// Registers every method of `AuthService` and `SessionRevocationService` on `router`.
    func register(on router: inout Router) {
        router.unary(AuthContract.signUp, signUp)
        router.unary(AuthContract.verifyEmail, verifyEmail)
        router.unary(AuthContract.resendVerification, resendVerification)
        router.unary(AuthContract.signIn) { request, context in
            try await metrics.countingSignIn(method: AuthMetrics.passwordMethod) { try await signIn(request, context: context) }
        }
        router.unary(AuthContract.signInWithIdToken) { request, context in
            try await metrics.countingSignIn(method: request.provider.rawValue) {
                try await signInWithIdToken(request, context: context)
            }
        }
        router.unary(AuthContract.refreshSession, refreshSession)
        router.unary(AuthContract.signOut, signOut)
        router.unary(AuthContract.requestPasswordReset, requestPasswordReset)
        router.unary(AuthContract.resetPassword, resetPassword)
        router.unary(AuthContract.changePassword, changePassword)
        router.unary(AuthContract.getCurrentUser, getCurrentUser)
        router.unary(AuthContract.updateProfile, updateProfile)
        router.unary(AuthContract.deleteAccount, deleteAccount)
        router.serverStreaming(AuthContract.watchAuthState, watchAuthState)
        router.unary(AuthContract.getJwks, getJwks)
        router.unary(SessionRevocationContract.listRevokedSessions, listRevokedSessions)
    }
}
