import Logging
import Contracts
import RPC
import ServiceKit

/// Passwords: reset by email link, and change by the signed-in user.
extension AuthService {
    /// `RequestPasswordReset`: a reset email for an existing account; `{}` whether or not the
    /// address has one.
    func requestPasswordReset(_ request: RequestPasswordResetRequest, context: ServerContext) async throws -> Empty {
        try AuthRateLimits.check(limits.emailRequests, clientAddress(context))
        let email = try InputRules.requireEmail(request.email)
        if let user = try await store.user(email: email), limits.perRecipient.allow(email) {
            try await sendLink(.resetPassword, to: user)
        }
        return Empty()
    }

    /// `ResetPassword`: sets a new password with a reset token, verifies the address and
    /// revokes every session.
    func resetPassword(_ request: ResetPasswordRequest, context: ServerContext) async throws -> Empty {
        let hash = try Self.tokenHash(request.token, field: "token")
        // Check the token before paying for a hash; the write below checks it again.
        let userID: String
        switch try await store.checkEmailToken(hash: hash, purpose: .resetPassword) {
        case .success(let id): userID = id
        case .failure(let problem): throw Self.error(for: problem)
        }
        guard let user = try await store.user(id: userID) else { throw Self.error(for: .invalid) }
        let passwordHash = try await newPasswordHash(request.newPassword, email: user.email, field: "newPassword")
        switch try await store.redeemResetToken(hash: hash, newPasswordHash: passwordHash) {
        case .success(let (_, revoked)):
            announceRevoked(revoked)
            context.logger.info("password reset", metadata: ["user": "\(userID)", "revoked": "\(revoked.count)"])
            return Empty()
        case .failure(let problem):
            throw Self.error(for: problem)
        }
    }

    /// `ChangePassword`: needs the current password; keeps the calling session (answered with
    /// fresh tokens) and revokes every other.
    func changePassword(_ request: ChangePasswordRequest, context: ServerContext) async throws -> Session {
        let (caller, user) = try await currentUser(context)
        try InputRules.checkPasswordSize(request.currentPassword, field: "currentPassword")
        let address = clientAddress(context)
        switch throttle.decide(account: user.email, address: address) {
        case .refuse:
            throw AuthReason.tooManyAttempts.error("Too many failed attempts; try again in 15 minutes.")
        case .proceed(let delay):
            if delay > .zero { try await Task.sleep(for: delay) }
        }
        guard try await checkPassword(request.currentPassword, user: user) else {
            throttle.recordFailure(account: user.email, address: address)
            throw AuthReason.invalidCredentials.error("The current password is incorrect.")
        }
        let passwordHash = try await newPasswordHash(request.newPassword, email: user.email, field: "newPassword")
        let revoked = try await store.changePassword(
            userID: user.id, newPasswordHash: passwordHash, keeping: caller.sessionID)
        announceRevoked(revoked)
        let refresh = sessions.newRefreshToken()
        guard let session = try await store.renewSession(id: caller.sessionID, refreshHash: refresh.hash) else {
            throw AuthReason.sessionRevoked.error("The session has been revoked; sign in again.")
        }
        var updated = user
        updated.passwordHash = passwordHash
        return try sessions.session(for: updated, sessionID: session.id, refreshToken: refresh.token)
    }
}
