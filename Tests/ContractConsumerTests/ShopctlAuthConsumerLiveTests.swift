import ContractTesting
import Contracts
@testable import shopctl
import Testing

/// `shopctl auth …` against the gateway played from shopctl's contract: each command's call,
/// the session it leaves in the test's credentials file, the refresh after an expired access
/// token, and `auth watch` to its end.
@Suite("shopctl's account commands as a consumer")
struct ShopctlAuthConsumerLiveTests {
    /// shopctl's interactions with the gateway.
    typealias Interactions = ShopctlInteractions

    /// What an account command leaves in the credentials file.
    enum Afterwards: Sendable, CustomStringConvertible {
        /// Nothing: signed out, or never signed in.
        case noSession
        /// The session the gateway answered, for `email`.
        case session(email: String)
        /// The credentials the test stored, untouched.
        case unchanged

        var description: String {
            switch self {
            case .noSession: "no session"
            case .session(let email): "a session of \(email)"
            case .unchanged: "the stored session"
            }
        }
    }

    /// One account command: its command line, standard input, whether it starts signed in,
    /// its interaction and what it leaves behind.
    struct Case: Sendable, CustomTestStringConvertible {
        /// The command line, without `--gateway` and `--json`.
        let arguments: [String]
        /// Standard input: the passwords, one per line.
        var input = ""
        /// Whether the test's credentials are stored before the run.
        var signedIn = false
        /// The description of the interaction the command makes.
        let interaction: String
        /// What the credentials file holds afterwards.
        let afterwards: Afterwards

        var testDescription: String { "auth " + arguments.dropFirst().joined(separator: " ") }
    }

    /// The account of the cases.
    static let email = Interactions.email

    /// Every account command that calls the gateway once.
    static let cases = [
        Case(
            arguments: ["auth", "signup", "--email", email, "--display-name", "Ada", "--password-stdin"],
            input: Interactions.newPassword + "\n", interaction: "SignUp for auth signup", afterwards: .noSession),
        Case(arguments: ["auth", "verify", Interactions.verificationToken], interaction: "VerifyEmail for auth verify", afterwards: .noSession),
        Case(
            arguments: ["auth", "resend-verification", "--email", email],
            interaction: "ResendVerification for auth resend-verification", afterwards: .noSession),
        Case(
            arguments: ["auth", "login", "--email", email, "--password-stdin"], input: Interactions.password + "\n",
            interaction: "SignIn for auth login", afterwards: .session(email: email)),
        Case(
            arguments: ["auth", "login-google", "--id-token", Interactions.exampleIDToken],
            interaction: "SignInWithIdToken for auth login-google", afterwards: .session(email: Interactions.googleUser.email)),
        Case(
            arguments: ["auth", "login-apple", "--id-token", Interactions.exampleIDToken, "--raw-nonce", Interactions.rawNonce],
            interaction: "SignInWithIdToken for auth login-apple", afterwards: .session(email: Interactions.appleUser.email)),
        Case(arguments: ["auth", "logout"], signedIn: true, interaction: "SignOut for auth logout", afterwards: .noSession),
        Case(
            arguments: ["auth", "logout", "--all"], signedIn: true, interaction: "SignOut everywhere for auth logout --all",
            afterwards: .noSession),
        Case(arguments: ["auth", "whoami"], signedIn: true, interaction: "GetCurrentUser for auth whoami", afterwards: .unchanged),
        Case(
            arguments: ["auth", "reset-password", "--email", email],
            interaction: "RequestPasswordReset for auth reset-password", afterwards: .noSession),
        Case(
            arguments: ["auth", "confirm-reset", Interactions.resetToken, "--password-stdin"],
            input: Interactions.newPassword + "\n", signedIn: true, interaction: "ResetPassword for auth confirm-reset",
            afterwards: .noSession),
        Case(
            arguments: ["auth", "change-password", "--password-stdin"],
            input: Interactions.password + "\n" + Interactions.newPassword + "\n", signedIn: true,
            interaction: "ChangePassword for auth change-password", afterwards: .session(email: email)),
        Case(
            arguments: ["auth", "delete-account", "--password-stdin"], input: Interactions.password + "\n", signedIn: true,
            interaction: "DeleteAccount for auth delete-account", afterwards: .noSession),
    ]

    @Test("each account command makes the call its interaction describes and keeps the session it should", arguments: cases)
    func accountCommand(_ command: Case) async throws {
        let stored = try ShopctlConsumerLiveTests.credentials()
        try await ShopctlConsumerLiveTests.run(
            command.arguments, serving: [try ShopctlConsumerLiveTests.interaction(command.interaction)],
            as: command.signedIn ? stored : nil, input: command.input
        ) { shopctl in
            #expect(shopctl.lines.count == 1, "\(shopctl.lines)")
            let credentials = try shopctl.store.load()
            switch command.afterwards {
            case .noSession:
                #expect(credentials == nil)
            case .unchanged:
                #expect(credentials == stored)
            case .session(let email):
                #expect(credentials?.accessToken == Interactions.sessionAccessToken)
                #expect(credentials?.refreshToken == "opaque-refresh-token")
                #expect(credentials?.email == email)
            }
        }
    }

    @Test("an access token refused as expired is refreshed once, stored, and the call retried with the new one")
    func refreshAfterExpiredToken() async throws {
        let expired = StoredCredentials(
            accessToken: Interactions.expiredAccessToken, refreshToken: Interactions.storedRefreshToken,
            userId: Interactions.user.id, email: Interactions.email)
        try await ShopctlConsumerLiveTests.run(
            ["auth", "whoami"],
            serving: [
                Interactions.currentUserWithExpiredToken(), try Interactions.refreshSession(),
                try Interactions.currentUserAfterRefresh(),
            ],
            as: expired
        ) { shopctl in
            #expect(try shopctl.printed(UserResponse.self).map(\.user.email) == [Interactions.email])
            let credentials = try shopctl.store.load()
            #expect(credentials?.accessToken == Interactions.refreshedAccessToken)
            #expect(credentials?.refreshToken == "opaque-refresh-token")
        }
    }

    @Test("auth watch prints the signed-in state, then the signed-out state, and ends with the stream", .timeLimit(.minutes(1)))
    func watchAuthState() async throws {
        try await ShopctlConsumerLiveTests.run(
            ["auth", "watch"], serving: [try Interactions.watchAuthState()], as: try ShopctlConsumerLiveTests.credentials()
        ) { shopctl in
            let states = try shopctl.printed(WatchAuthStateResponse.self)
            #expect(states.map(\.state) == [.signedIn, .signedOut])
            #expect(states.first?.user?.email == Interactions.email)
        }
    }
}
