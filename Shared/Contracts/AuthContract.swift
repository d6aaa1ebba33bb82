public import RPC

/// `shop.auth.v1.AuthService` (API.md §3): accounts, sessions and the keys that verify access tokens.
public enum AuthContract {
    /// The fully qualified service name.
    public static let service = "shop.auth.v1.AuthService"

    /// `SignUp`: creates a password account and sends a verification email.
    public static let signUp = MethodDescriptor<SignUpRequest, UserResponse>(
        service: service, method: "SignUp", kind: .unary)
    /// `VerifyEmail`: redeems the token of a verification link.
    public static let verifyEmail = MethodDescriptor<VerifyEmailRequest, UserResponse>(
        service: service, method: "VerifyEmail", kind: .unary)
    /// `ResendVerification`: sends a new verification email, never revealing whether the address exists.
    public static let resendVerification = MethodDescriptor<ResendVerificationRequest, Empty>(
        service: service, method: "ResendVerification", kind: .unary)
    /// `SignIn`: signs in with email and password.
    public static let signIn = MethodDescriptor<SignInRequest, Session>(
        service: service, method: "SignIn", kind: .unary)
    /// `SignInWithIdToken`: signs in with a Google or Apple ID token.
    public static let signInWithIdToken = MethodDescriptor<SignInWithIdTokenRequest, Session>(
        service: service, method: "SignInWithIdToken", kind: .unary)
    /// `RefreshSession`: exchanges a refresh token for a new session, rotating the refresh token.
    public static let refreshSession = MethodDescriptor<RefreshSessionRequest, Session>(
        service: service, method: "RefreshSession", kind: .unary)
    /// `SignOut`: revokes this session, or every session of the user.
    public static let signOut = MethodDescriptor<SignOutRequest, Empty>(
        service: service, method: "SignOut", kind: .unary, auth: .user)
    /// `RequestPasswordReset`: emails a reset link, never revealing whether the address exists.
    public static let requestPasswordReset = MethodDescriptor<RequestPasswordResetRequest, Empty>(
        service: service, method: "RequestPasswordReset", kind: .unary)
    /// `ResetPassword`: sets a new password with the token of a reset link.
    public static let resetPassword = MethodDescriptor<ResetPasswordRequest, Empty>(
        service: service, method: "ResetPassword", kind: .unary)
    /// `ChangePassword`: replaces the password of the signed-in user.
    public static let changePassword = MethodDescriptor<ChangePasswordRequest, Session>(
        service: service, method: "ChangePassword", kind: .unary, auth: .user)
    /// `GetCurrentUser`: the signed-in user.
    public static let getCurrentUser = MethodDescriptor<Empty, UserResponse>(
        service: service, method: "GetCurrentUser", kind: .unary, auth: .user, idempotent: true)
    /// `UpdateProfile`: changes the display name.
    public static let updateProfile = MethodDescriptor<UpdateProfileRequest, UserResponse>(
        service: service, method: "UpdateProfile", kind: .unary, auth: .user)
    /// `DeleteAccount`: deletes the signed-in user's account and revokes its sessions.
    public static let deleteAccount = MethodDescriptor<DeleteAccountRequest, Empty>(
        service: service, method: "DeleteAccount", kind: .unary, auth: .user)
    /// `WatchAuthState`: the current state, then `SIGNED_OUT` when this session is revoked.
    public static let watchAuthState = MethodDescriptor<Empty, WatchAuthStateResponse>(
        service: service, method: "WatchAuthState", kind: .serverStreaming, auth: .user, idempotent: true)
    /// `GetJwks`: the public keys that verify access tokens.
    public static let getJwks = MethodDescriptor<Empty, GetJwksResponse>(
        service: service, method: "GetJwks", kind: .unary, idempotent: true)

    /// Every method, in API.md order.
    public static let all: [MethodInfo] = [
        signUp.info, verifyEmail.info, resendVerification.info, signIn.info, signInWithIdToken.info,
        refreshSession.info, signOut.info, requestPasswordReset.info, resetPassword.info, changePassword.info,
        getCurrentUser.info, updateProfile.info, deleteAccount.info, watchAuthState.info, getJwks.info,
    ]
}

/// The stable error reasons of auth-svc (API.md §3), plus the four that every authenticated
/// method of every service answers with `UNAUTHENTICATED`.
public enum AuthReason: String, ErrorReason {
    /// The email address is not a valid address.
    case invalidEmail = "INVALID_EMAIL"
    /// The password breaks the password policy.
    case weakPassword = "WEAK_PASSWORD"
    /// An account with this email address exists.
    case emailAlreadyInUse = "EMAIL_ALREADY_IN_USE"
    /// Too many requests from this client or for this address.
    case rateLimited = "RATE_LIMITED"
    /// A verification or reset token is unknown or already used.
    case invalidToken = "INVALID_TOKEN"
    /// A verification or reset token has expired.
    case tokenExpired = "TOKEN_EXPIRED"
    /// The email and password, or the current password, do not match an account.
    case invalidCredentials = "INVALID_CREDENTIALS"
    /// The account's email address is not verified yet; a new verification email was sent.
    case emailNotVerified = "EMAIL_NOT_VERIFIED"
    /// Sign-in for this account is throttled after repeated failures.
    case tooManyAttempts = "TOO_MANY_ATTEMPTS"
    /// An ID token failed verification.
    case invalidCredential = "INVALID_CREDENTIAL"
    /// The identity provider is not supported or not configured.
    case unsupportedProvider = "UNSUPPORTED_PROVIDER"
    /// The refresh token is unknown, expired or revoked.
    case invalidRefreshToken = "INVALID_REFRESH_TOKEN"
    /// An already rotated refresh token was presented; the whole session family is revoked.
    case refreshTokenReused = "REFRESH_TOKEN_REUSED"
    /// The operation needs the password, or a sign-in within the last five minutes.
    case requiresRecentLogin = "REQUIRES_RECENT_LOGIN"
    /// An authenticated method was called without `authorization: Bearer`.
    case missingToken = "MISSING_TOKEN"
    /// The access token is malformed, badly signed or not meant for this system.
    case invalidAccessToken = "INVALID_ACCESS_TOKEN"
    /// The access token has expired; refresh the session.
    case accessTokenExpired = "ACCESS_TOKEN_EXPIRED"
    /// The access token's session has been revoked.
    case sessionRevoked = "SESSION_REVOKED"
    /// `ChangePassword` or `ResetPassword` with the password the account already has (not in
    /// API.md's table; auth-svc README).
    case samePassword = "SAME_PASSWORD"

    /// The gRPC status code this reason is sent with.
    public var code: RPCCode {
        switch self {
        case .invalidEmail, .weakPassword, .invalidToken, .samePassword: .invalidArgument
        case .emailAlreadyInUse: .alreadyExists
        case .rateLimited, .tooManyAttempts: .resourceExhausted
        case .tokenExpired, .emailNotVerified, .requiresRecentLogin: .failedPrecondition
        case .unsupportedProvider: .unimplemented
        case .invalidCredentials, .invalidCredential, .invalidRefreshToken, .refreshTokenReused, .missingToken,
            .invalidAccessToken, .accessTokenExpired, .sessionRevoked:
            .unauthenticated
        }
    }
}
