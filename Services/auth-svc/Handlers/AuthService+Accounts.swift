import Logging
import Contracts
import Credentials
import RPC
import ServiceKit

/// Accounts: sign-up, email verification, the current user, profile and deletion.
extension AuthService {
    /// `SignUp`: a new unverified password account, and a verification email.
    func signUp(_ request: SignUpRequest, context: ServerContext) async throws -> UserResponse {
        try AuthRateLimits.check(limits.signUp, clientAddress(context))
        let email = try InputRules.requireEmail(request.email)
        let displayName = try InputRules.displayName(request.displayName)
        let passwordHash = try await newPasswordHash(request.password, email: email, field: .password, context: context)
        let user: UserRecord
        do {
            user = try await store.createUser(email: email, passwordHash: passwordHash, displayName: displayName)
        } catch AuthStore.Conflict.emailInUse {
            throw AuthError.emailAlreadyInUse
        }
        metrics.countSignUp()
        try await sendVerification(to: user)
        context.logger.info("account created", metadata: ["user": "\(user.id)"])
        return UserResponse(user: user.message)
    }

    /// `VerifyEmail`: redeems a verification token.
    func verifyEmail(_ request: VerifyEmailRequest, context: ServerContext) async throws -> UserResponse {
        let hash = try Self.tokenHash(request.token, field: .token)
        switch try await store.redeemVerificationToken(hash: hash) {
        case .success(let (user, revoked)):
            announceRevoked(revoked)
            return UserResponse(user: user.message)
        case .failure(let problem): throw Self.error(for: problem)
        }
    }

    /// `ResendVerification`: a new verification email for an unverified account; `{}` whether
    /// or not the address has an account, answered before it is looked up.
    func resendVerification(_ request: ResendVerificationRequest, context: ServerContext) async throws -> Empty {
        try AuthRateLimits.check(limits.emailRequests, clientAddress(context))
        deferEmail(.verification, to: try InputRules.requireEmail(request.email), context: context)
        return Empty()
    }

    /// `GetCurrentUser`.
    func getCurrentUser(_ request: Empty, context: ServerContext) async throws -> UserResponse {
        let (_, user) = try await currentUser(context)
        return UserResponse(user: user.message)
    }

    /// `UpdateProfile`: sets (or, with an empty name, clears) the display name.
    func updateProfile(_ request: UpdateProfileRequest, context: ServerContext) async throws -> UserResponse {
        let caller = try context.requireUser()
        let name = try InputRules.displayName(request.displayName)
        do {
            return UserResponse(user: try await store.updateDisplayName(userID: caller.id, to: name).message)
        } catch AuthStore.Conflict.noSuchUser {
            throw AuthError.accountGone
        }
    }

    /// `DeleteAccount`: needs the password, or for an account without one a sign-in within the
    /// last five minutes; revokes every session.
    func deleteAccount(_ request: DeleteAccountRequest, context: ServerContext) async throws -> Empty {
        let (caller, user) = try await currentUser(context)
        if user.passwordHash != nil {
            guard let password = request.password, !password.isEmpty else {
                throw AuthError.passwordRequiredToDelete
            }
            try InputRules.checkPasswordSize(password, field: .password)
            try await checkThrottled(password, of: user, context: context, wrong: .wrongPassword)
        } else {
            guard let session = try await store.session(id: caller.sessionID),
                Timestamp.now() - session.authenticatedAt <= Self.recentLoginWindow
            else {
                throw AuthError.recentSignInRequired
            }
        }
        announceRevoked(try await store.deleteUser(id: user.id))
        context.logger.info("account deleted", metadata: ["user": "\(user.id)"])
        return Empty()
    }

    // MARK: Tokens

    /// The stored hash of a verification or reset token; `INVALID_TOKEN` for one too long or
    /// empty to be ours.
    static func tokenHash(_ token: String, field: RequestField) throws(RPCError) -> String {
        guard !token.isEmpty, token.utf8.count <= InputRules.maximumTokenLength else {
            throw field.invalid("is not valid; use the link from the latest email", reason: .invalidToken)
        }
        return OpaqueToken.hash(token)
    }

    /// The API.md answer to an unusable verification or reset token.
    static func error(for problem: AuthStore.EmailTokenProblem) -> AuthError {
        switch problem {
        case .invalid: .invalidLink
        case .expired: .expiredLink
        }
    }
}
