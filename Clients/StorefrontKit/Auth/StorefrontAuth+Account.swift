import Contracts
import Foundation
import RPC

/// The account's emails, password and deletion.
extension StorefrontAuth {
    /// Sends a new verification email. Never tells whether the address has an account.
    ///
    /// - Throws: `.rateLimited`.
    public func resendVerification(email: String) async throws(StorefrontError) {
        _ = try await calls.anonymous(AuthContract.resendVerification, ResendVerificationRequest(email: email))
    }

    /// Verifies an email address with the token of its verification link (an app opening the
    /// link itself, as Firebase's `applyActionCode`); returns the account.
    ///
    /// - Throws: `.invalidToken`, `.tokenExpired`.
    @discardableResult
    public func verifyEmail(token: String) async throws(StorefrontError) -> User {
        let user = try await calls.anonymous(AuthContract.verifyEmail, VerifyEmailRequest(token: token)).user
        do { try await calls.sessions.update(user) } catch { throw StorefrontError.converting(error) }
        return user
    }

    /// Sends a password-reset link. Never tells whether the address has an account.
    ///
    /// - Throws: `.rateLimited`.
    public func sendPasswordReset(email: String) async throws(StorefrontError) {
        _ = try await calls.anonymous(AuthContract.requestPasswordReset, RequestPasswordResetRequest(email: email))
    }

    /// Sets a new password with the token of a reset link (Firebase's `confirmPasswordReset`);
    /// every session of the account ends.
    ///
    /// - Throws: `.invalidToken`, `.tokenExpired`, `.weakPassword`.
    public func resetPassword(token: String, newPassword: String) async throws(StorefrontError) {
        _ = try await calls.anonymous(AuthContract.resetPassword, ResetPasswordRequest(token: token, newPassword: newPassword))
    }

    /// Changes the signed-in user's password. The account's other sessions end; this one
    /// continues with new tokens.
    ///
    /// - Throws: `.invalidCredentials` for a wrong current password, `.weakPassword`.
    @discardableResult
    public func changePassword(currentPassword: String, newPassword: String) async throws(StorefrontError) -> User {
        try await keep(calls.signedIn(
            AuthContract.changePassword, ChangePasswordRequest(currentPassword: currentPassword, newPassword: newPassword)))
    }

    /// Deletes the signed-in user's account and signs out. Password users give their
    /// password; users of Google or Apple sign-in must have signed in within five minutes.
    ///
    /// - Throws: `.invalidCredentials`, `.requiresRecentLogin`.
    public func deleteAccount(password: String?) async throws(StorefrontError) {
        _ = try await calls.signedIn(AuthContract.deleteAccount, DeleteAccountRequest(password: password))
        try await forgetSession()
    }
}
