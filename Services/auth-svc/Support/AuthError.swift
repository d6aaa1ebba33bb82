import Contracts
import RPC

/// Why auth-svc refuses a call, each case knowing the gRPC code, reason and message it is sent
/// with (API.md §5, README "Choices"). Field checks build their errors through
/// ``RequestField`` and ``InputRules``.
enum AuthError: Error, Sendable, Hashable, RPCErrorConvertible {
    /// Sign-in with `provider` (its raw value) is not configured here.
    case unsupportedProvider(provider: String)
    /// The ID token failed a check of its signature, issuer, audience or lifetime.
    case invalidIDToken
    /// The ID token's nonce is not the hash of the raw nonce (Apple).
    case nonceMismatch
    /// The keys of `provider` (its raw value) cannot be had to check its ID tokens.
    case providerKeysUnavailable(provider: String)
    /// The account is locked after too many wrong passwords (``SignInThrottle``).
    case tooManyAttempts
    /// Sign-in with an unknown email address or a wrong password; which of the two is not told.
    case wrongEmailOrPassword
    /// A signed-in caller's password, asked again to delete the account, is wrong.
    case wrongPassword
    /// A signed-in caller's current password, asked to change it, is wrong.
    case wrongCurrentPassword
    /// The account's email address is not verified yet; a new link was sent.
    case emailNotVerified
    /// Sign-up with an email address that already has an account.
    case emailAlreadyInUse
    /// Sign-in with an ID token whose email address belongs to a password account.
    case emailInUseByPasswordAccount
    /// A refresh token that is empty or too long to be one of ours.
    case malformedRefreshToken
    /// A refresh token that is not known, expired or revoked.
    case invalidRefreshToken
    /// A rotated refresh token presented again; its session is now revoked.
    case refreshTokenReused
    /// The caller's account was deleted.
    case accountGone
    /// The caller's session was revoked while the call ran.
    case sessionRevoked
    /// Deleting a password account needs its password.
    case passwordRequiredToDelete
    /// Deleting an account without a password needs a sign-in within the last five minutes.
    case recentSignInRequired
    /// A verification or reset token that is not known or was already used.
    case invalidLink
    /// A verification or reset token past its lifetime.
    case expiredLink
    /// A password change to the password the account already has.
    case samePassword
    /// A client over a request rate limit, who may try again after the wait.
    case rateLimited(retryAfter: Duration)
    /// The password hashing queue is full, or a job could not start before its caller's deadline.
    case overloaded

    /// The `TOO_MANY_ATTEMPTS` message: the lock's end, and the way out that really lifts it.
    static let lockedMessage =
        "Too many failed attempts; try again in 15 minutes, or reset the password by email: a completed reset lifts the lock."

    /// The reason sent when the server is too busy to hash; not one of API.md's, so defined here.
    static let overloadedReason = "OVERLOADED"

    /// The error as the client sees it.
    var rpcError: RPCError {
        switch self {
        case .unsupportedProvider(let provider):
            AuthReason.unsupportedProvider.error("Sign-in with \(provider) is not supported here.")
        case .invalidIDToken:
            AuthReason.invalidCredential.error("The ID token is not valid.")
        case .nonceMismatch:
            AuthReason.invalidCredential.error("The ID token's nonce does not match the raw nonce.")
        case .providerKeysUnavailable(let provider):
            RPCError(code: .unavailable, message: "The keys of \(provider) are not available; retry later.")
        case .tooManyAttempts:
            AuthReason.tooManyAttempts.error(Self.lockedMessage)
        case .wrongEmailOrPassword:
            AuthReason.invalidCredentials.error("The email address or password is incorrect.")
        case .wrongPassword:
            AuthReason.invalidCredentials.error("The password is incorrect.")
        case .wrongCurrentPassword:
            AuthReason.invalidCredentials.error("The current password is incorrect.")
        case .emailNotVerified:
            AuthReason.emailNotVerified.error("Verify your email address first; a new link is on its way.")
        case .emailAlreadyInUse:
            AuthReason.emailAlreadyInUse.error("An account with this email address already exists.")
        case .emailInUseByPasswordAccount:
            AuthReason.emailAlreadyInUse.error(
                "An account with this email address exists; sign in to it with its password.")
        case .malformedRefreshToken:
            AuthReason.invalidRefreshToken.error("The refresh token is not valid.")
        case .invalidRefreshToken:
            AuthReason.invalidRefreshToken.error("The refresh token is not valid, expired or revoked.")
        case .refreshTokenReused:
            AuthReason.refreshTokenReused.error("This refresh token was already used; the session is revoked.")
        case .accountGone:
            AuthReason.sessionRevoked.error("The account no longer exists.")
        case .sessionRevoked:
            AuthReason.sessionRevoked.error("The session has been revoked; sign in again.")
        case .passwordRequiredToDelete:
            AuthReason.requiresRecentLogin.error("Give the account's password to delete it.")
        case .recentSignInRequired:
            AuthReason.requiresRecentLogin.error("Sign in again, then delete the account within five minutes.")
        case .invalidLink:
            AuthReason.invalidToken.error("The link is not valid or was already used.")
        case .expiredLink:
            AuthReason.tokenExpired.error("The link has expired; ask for a new one.")
        case .samePassword:
            AuthReason.samePassword.invalidField(
                RequestField.newPassword.path, "is the same as the current one", subject: RequestField.newPassword.subject)
        case .rateLimited(let wait):
            AuthReason.rateLimited.error("Too many requests", retryAfter: wait)
        case .overloaded:
            RPCError(code: .resourceExhausted, reason: Self.overloadedReason, message: "The server is busy; retry shortly.")
        }
    }
}
