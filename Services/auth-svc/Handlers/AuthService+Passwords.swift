import Logging
import Contracts
import RPC
import ServiceKit

/// Passwords: reset by email link, and change by the signed-in user.
extension AuthService {
    /// `RequestPasswordReset`: a reset email for an existing account; `{}` whether or not the
    /// address has one, answered before the address is looked up (``deferEmail(_:to:context:)``).
    func requestPasswordReset(_ request: RequestPasswordResetRequest, context: ServerContext) async throws -> Empty {
        try AuthRateLimits.check(limits.emailRequests, clientAddress(context))
        deferEmail(.passwordReset, to: try InputRules.requireEmail(request.email), context: context)
        return Empty()
    }

    /// `ResetPassword`: sets a new password with a reset token, verifies the address and
    /// revokes every session.
    func resetPassword(_ request: ResetPasswordRequest, context: ServerContext) async throws -> Empty {
        let hash = try Self.tokenHash(request.token, field: .token)
        // Check the token before paying for a hash; the write below checks it again.
        let userID: String
        switch try await store.checkEmailToken(hash: hash, purpose: .resetPassword) {
        case .success(let id): userID = id
        case .failure(let problem): throw Self.error(for: problem)
        }
        guard let user = try await store.user(id: userID) else { throw Self.error(for: .invalid) }
        let passwordHash = try await newPasswordHash(request.newPassword, email: user.email, field: .newPassword, context: context)
        switch try await store.redeemResetToken(hash: hash, newPasswordHash: passwordHash) {
        case .success(let (_, revoked)):
            // The same transaction lifted the account's sign-in lock, if any.
            announceRevoked(revoked)
            context.logger.info("password reset", metadata: ["user": "\(userID)", "revoked": "\(revoked.count)"])
            return Empty()
        case .failure(let problem):
            throw Self.error(for: problem)
        }
    }

    /// Checks `password` against `user`'s as one throttled attempt on the account
    /// (`SignInThrottle`): `TOO_MANY_ATTEMPTS` when throttled, `wrong` (an `INVALID_CREDENTIALS`
    /// case naming the password asked for) for a wrong password. For a signed-in caller: a
    /// success keeps the record.
    func checkThrottled(_ password: String, of user: UserRecord, context: ServerContext, wrong: AuthError) async throws {
        switch try await throttle.attempt(
            account: user.email, address: clientAddress(context), clearsOnSuccess: false, giveUpAt: throttleGiveUp(context), check: {
            try await checkPassword(password, user: user, account: user.email, context: context)
        }) {
        case .refused: throw AuthError.tooManyAttempts
        case .failed: throw wrong
        case .passed: return
        }
    }

    /// `ChangePassword`: needs the current password; keeps the calling session (answered with
    /// fresh tokens) and revokes every other. A new password equal to the current one is
    /// `SAME_PASSWORD`, told only once the current password is proven (so the refusal says
    /// nothing about a password the caller does not know).
    func changePassword(_ request: ChangePasswordRequest, context: ServerContext) async throws -> Session {
        let (caller, user) = try await currentUser(context)
        try InputRules.checkPasswordSize(request.currentPassword, field: .currentPassword)
        try await checkThrottled(request.currentPassword, of: user, context: context, wrong: .wrongCurrentPassword)
        // Byte for byte, as the hash compares them: "é" composed and decomposed are two passwords.
        guard !request.newPassword.utf8.elementsEqual(request.currentPassword.utf8) else { throw AuthError.samePassword }
        let passwordHash = try await newPasswordHash(request.newPassword, email: user.email, field: .newPassword, context: context)
        let revoked = try await store.changePassword(
            userID: user.id, newPasswordHash: passwordHash, keeping: caller.sessionID)
        announceRevoked(revoked)
        let refresh = sessions.newRefreshToken()
        guard let session = try await store.renewSession(id: caller.sessionID, refreshHash: refresh.hash) else {
            throw AuthError.sessionRevoked
        }
        var updated = user
        updated.passwordHash = passwordHash
        return try sessions.session(for: updated, sessionID: session.id, refreshToken: refresh.token)
    }
}
