import ContractTesting
import Contracts
import RPC
import JSON

/// What `shopctl auth …` expects of the gateway: every account command, the session
/// refresh after an expired access token, and `auth watch`.
extension ShopctlInteractions {
    /// The account as the examples show it; the provider's has its own id and dates.
    static let user = User(
        id: "2d7f3a9c-0b1e-4c5d-8e6f-7a8b9c0d1e2f", email: email, emailVerified: true, providers: ["password"],
        createdAt: "2026-11-22T01:41:17Z")

    /// The matchers of an answer carrying a user at `$.user`: shapes by type, the email as given.
    static let userAnswerRules: [String: Matcher] = ["$": Matcher.type.allowingExtraFields]
        .merging(GatewayInteractions.userRules(at: "$.user")) { $1 }

    /// A session as shopctl stores it: tokens of the right shape, the user's id and email.
    static func session(for user: User, accessToken: String = sessionAccessToken) throws -> ResponseExpectation {
        try .message(
            encoding: Session(accessToken: accessToken, refreshToken: "opaque-refresh-token", expiresIn: 900, user: user),
            rules: userAnswerRules.merging([
                "$.accessToken": .regex(Matcher.Pattern.jws), "$.tokenType": .equality, "$.expiresIn": .integer,
            ]) { $1 })
    }

    /// The access token of example sessions (shopctl never looks inside it).
    static let sessionAccessToken =
        "eyJhbGciOiJFZERTQSIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJjb250cmFjdC11c2VyIiwibm90ZSI6InNlc3Npb24gYWNjZXNzIHRva2VuIn0.c2Vzc2lvbi1zaWduYXR1cmU"

    // MARK: Accounts

    /// The password `auth signup` and `confirm-reset` set.
    static let newPassword = "violet anchor lantern 71"
    /// The token of the verification email `auth verify` redeems.
    static let verificationToken = "vR7kQ2mZ8pL4xN1cT6wB9sD3fH5jG0aY"
    /// The token of the reset email `auth confirm-reset` redeems.
    static let resetToken = "rS3nW8qK1vM6zP9bX2cF7hJ4dL0tG5yA"
    /// An account whose address is not verified yet.
    static let unverified = ProviderState("a user with an unverified email", ["email": .string(email)])

    /// `auth signup --email E --display-name Ada --password-stdin`.
    static func signUp() throws -> InteractionSpec {
        var created = user
        created.emailVerified = false
        created.displayName = "Ada"
        return InteractionSpec(
            "SignUp for auth signup", path: AuthContract.signUp.path,
            response: try .message(
                encoding: UserResponse(user: created),
                rules: userAnswerRules.merging(["$.user.emailVerified": .equality, "$.user.displayName": .equality]) { $1 }))
    }

    /// `auth verify TOKEN`.
    static func verifyEmail() throws -> InteractionSpec {
        InteractionSpec(
            "VerifyEmail for auth verify",
            given: [
                unverified,
                ProviderState("a verification email was sent", ["email": .string(email), "token": .string(verificationToken)]),
            ],
            path: AuthContract.verifyEmail.path,
            response: try .message(
                encoding: UserResponse(user: user), rules: userAnswerRules.merging(["$.user.emailVerified": .equality]) { $1 }))
    }

    /// `auth resend-verification --email E`.
    static func resendVerification() throws -> InteractionSpec {
        InteractionSpec(
            "ResendVerification for auth resend-verification", given: [unverified],
            path: AuthContract.resendVerification.path, response: try empty())
    }

    /// `auth login --email E --password-stdin`.
    static func signIn() throws -> InteractionSpec {
        InteractionSpec(
            "SignIn for auth login", given: [hasPassword], path: AuthContract.signIn.path, response: try session(for: user))
    }

    /// The Google account of `auth login-google`.
    static let googleUser = User(
        id: "5b8e2d4f-7a90-4c1e-9f3a-2d7e6b1c0a84", email: "gina@example.com", emailVerified: true, providers: ["google"],
        createdAt: "2026-11-22T01:41:17Z")
    /// The Apple account of `auth login-apple`.
    static let appleUser = User(
        id: "8c1f4a7e-2b5d-4e9a-b0c3-6d2f8e1a5b97", email: "abc@privaterelay.appleid.com", emailVerified: true,
        providers: ["apple"], createdAt: "2026-11-22T01:41:17Z")
    /// The raw nonce of the Apple sign-in.
    static let rawNonce = "raw-nonce-1"
    /// An ID token as shopctl passes it on (it never looks inside); the provider mints a real one.
    static let exampleIDToken =
        "eyJhbGciOiJSUzI1NiIsImtpZCI6Imdvb2dsZS0xIn0.eyJzdWIiOiJnb29nbGUtdXNlci0xIn0.c2lnbmF0dXJl"

    /// `auth login-google --id-token T`.
    static func signInWithGoogle() throws -> InteractionSpec {
        InteractionSpec(
            "SignInWithIdToken for auth login-google",
            given: [
                ProviderState(
                    "Google signs an ID token", ["subject": .string("google-user-1"), "email": .string(googleUser.email)])
            ],
            path: AuthContract.signInWithIdToken.path, messageRules: ["$.idToken": .regex(Matcher.Pattern.jws)],
            generators: Generators(message: ["$.idToken": "${idToken}"]), response: try session(for: googleUser))
    }

    /// `auth login-apple --id-token T --raw-nonce N`.
    static func signInWithApple() throws -> InteractionSpec {
        InteractionSpec(
            "SignInWithIdToken for auth login-apple",
            given: [
                ProviderState(
                    "Apple signs an ID token",
                    [
                        "subject": .string("001234.apple-user"), "email": .string(appleUser.email),
                        "rawNonce": .string(rawNonce),
                    ])
            ],
            path: AuthContract.signInWithIdToken.path, messageRules: ["$.idToken": .regex(Matcher.Pattern.jws)],
            generators: Generators(message: ["$.idToken": "${idToken}"]), response: try session(for: appleUser))
    }

    /// `auth logout`.
    static func signOut() throws -> InteractionSpec {
        InteractionSpec(
            "SignOut for auth logout", given: [signedIn], path: AuthContract.signOut.path, metadata: userMetadata,
            generators: userGenerators, response: try empty())
    }

    /// `auth logout --all`.
    static func signOutEverywhere() throws -> InteractionSpec {
        InteractionSpec(
            "SignOut everywhere for auth logout --all", given: [signedIn], path: AuthContract.signOut.path,
            metadata: userMetadata, generators: userGenerators, response: try empty())
    }

    /// `auth whoami`.
    static func currentUser() throws -> InteractionSpec {
        InteractionSpec(
            "GetCurrentUser for auth whoami", given: [signedIn], path: AuthContract.getCurrentUser.path,
            metadata: userMetadata, generators: userGenerators,
            response: try .message(encoding: UserResponse(user: user), rules: userAnswerRules))
    }

    /// `auth reset-password --email E`.
    static func requestPasswordReset() throws -> InteractionSpec {
        InteractionSpec(
            "RequestPasswordReset for auth reset-password", given: [hasPassword],
            path: AuthContract.requestPasswordReset.path, response: try empty())
    }

    /// `auth confirm-reset TOKEN --password-stdin`.
    static func resetPassword() throws -> InteractionSpec {
        InteractionSpec(
            "ResetPassword for auth confirm-reset",
            given: [
                hasPassword,
                ProviderState("a password reset email was sent", ["email": .string(email), "token": .string(resetToken)]),
            ],
            path: AuthContract.resetPassword.path, response: try empty())
    }

    /// `auth change-password --password-stdin`.
    static func changePassword() throws -> InteractionSpec {
        InteractionSpec(
            "ChangePassword for auth change-password", given: [hasPassword, signedIn], path: AuthContract.changePassword.path,
            metadata: userMetadata, generators: userGenerators, response: try session(for: user))
    }

    /// `auth delete-account --password-stdin`.
    static func deleteAccount() throws -> InteractionSpec {
        InteractionSpec(
            "DeleteAccount for auth delete-account", given: [hasPassword, signedIn], path: AuthContract.deleteAccount.path,
            metadata: userMetadata, generators: userGenerators, response: try empty())
    }

    /// `auth watch`: the session signed in, then signed out when it is revoked — which ends
    /// the stream, and the command with it.
    static func watchAuthState() throws -> InteractionSpec {
        InteractionSpec(
            "WatchAuthState for auth watch, until the session is signed out", given: [signedIn],
            path: AuthContract.watchAuthState.path, metadata: userMetadata, generators: userGenerators,
            response: .stream(
                [
                    try StreamedMessage(
                        encoding: WatchAuthStateResponse(state: .signedIn, user: user),
                        rules: userAnswerRules.merging(["$.state": .equality]) { $1 }),
                    try StreamedMessage(
                        encoding: WatchAuthStateResponse(state: .signedOut),
                        rules: ["$": Matcher.type.allowingExtraFields, "$.state": .equality],
                        after: ProviderState("the user signs out everywhere", ["email": .string(email)])),
                ], then: .ok))
    }

    /// What the account commands expect.
    static func ofAuth() throws -> [InteractionSpec] {
        [
            try signUp(), try verifyEmail(), try resendVerification(), try signIn(), try signInWithGoogle(),
            try signInWithApple(), try signOut(), try signOutEverywhere(), try currentUser(), try requestPasswordReset(),
            try resetPassword(), try changePassword(), try deleteAccount(), try watchAuthState(),
        ]
    }

    // MARK: Refresh

    /// The stored access token the gateway refuses as expired (shopctl never looks inside it).
    static let expiredAccessToken =
        "eyJhbGciOiJFZERTQSIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJjb250cmFjdC11c2VyIiwibm90ZSI6ImV4cGlyZWQgYWNjZXNzIHRva2VuIn0.ZXhwaXJlZC1zaWduYXR1cmU"
    /// The access token RefreshSession answers with.
    static let refreshedAccessToken =
        "eyJhbGciOiJFZERTQSIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJjb250cmFjdC11c2VyIiwibm90ZSI6InJlZnJlc2hlZCBhY2Nlc3MgdG9rZW4ifQ.cmVmcmVzaGVkLXNpZ25hdHVyZQ"
    /// The stored refresh token.
    static let storedRefreshToken = "stored-refresh-token-0123456789abcdef"
    /// A user whose stored access token has expired, and whose refresh token still works.
    static let expired = ProviderState("a signed-in user whose access token has expired", ["email": .string(email)])

    /// The first try of `auth whoami` with an expired token: refused. The token is matched
    /// exactly — it tells this call from the retry — and the provider signs one that expired.
    static func currentUserWithExpiredToken() -> InteractionSpec {
        InteractionSpec(
            "GetCurrentUser with an expired access token", given: [expired], path: AuthContract.getCurrentUser.path,
            metadata: [MetadataKey.authorization: .equality], generators: userGenerators,
            response: .status(AuthReason.accessTokenExpired))
    }

    /// The refresh that follows, with the stored refresh token (the provider's own).
    static func refreshSession() throws -> InteractionSpec {
        InteractionSpec(
            "RefreshSession after the access token expired", given: [expired], path: AuthContract.refreshSession.path,
            generators: Generators(message: ["$.refreshToken": "${refreshToken}"]),
            response: try session(for: user, accessToken: refreshedAccessToken))
    }

    /// The retry with the refreshed token, matched exactly.
    static func currentUserAfterRefresh() throws -> InteractionSpec {
        InteractionSpec(
            "GetCurrentUser with the refreshed access token", given: [signedIn], path: AuthContract.getCurrentUser.path,
            metadata: [MetadataKey.authorization: .equality], generators: userGenerators,
            response: try .message(encoding: UserResponse(user: user), rules: userAnswerRules))
    }

    /// The refresh path.
    static func ofSession() throws -> [InteractionSpec] {
        [currentUserWithExpiredToken(), try refreshSession(), try currentUserAfterRefresh()]
    }
}
