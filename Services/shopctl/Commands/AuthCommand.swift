import ArgumentParser
import Contracts
import Foundation
import RPC

/// `shopctl auth …`: accounts and the session shopctl keeps for them.
struct AuthCommand: AsyncParsableCommand {
    /// The subcommands.
    static let configuration = CommandConfiguration(
        commandName: "auth", abstract: "Sign up, sign in and out, and manage the account.",
        discussion: """
            Examples:
              shopctl auth signup --email ada@example.com
              shopctl auth verify TOKEN
              shopctl auth login --email ada@example.com
              shopctl auth logout
            """,
        subcommands: [
            SignUp.self, Verify.self, ResendVerification.self, Login.self, LoginGoogle.self, LoginApple.self,
            Logout.self, WhoAmI.self, ResetPassword.self, ConfirmReset.self, ChangePassword.self, DeleteAccount.self,
            Watch.self,
        ])

    /// `--password-stdin`, shared by the commands that need a password.
    struct PasswordOptions: ParsableArguments {
        /// Whether to read passwords from standard input instead of prompting.
        @Flag(help: "Read the password from standard input (one per line) instead of prompting.")
        var passwordStdin = false

        /// A reader honouring the flag.
        var reader: PasswordReader { PasswordReader(fromStandardInput: passwordStdin) }
    }

    /// Stores the session a sign-in answered and says who is signed in — and, when it
    /// replaced the saved session of another account, whose.
    static func signedIn(_ reply: Reply<Session>, context: CommandContext) async throws {
        // An unreadable file is replaced like any other; there is no one to name then.
        let previous = try? context.store.load()
        try await context.store.replaceSession(with: StoredCredentials(reply.message))
        context.output.message(reply.raw) { signInMessage(reply.message.user, replacing: previous) }
    }

    /// "Signed in as EMAIL.", with the account whose saved session this one replaced when it
    /// was another's.
    static func signInMessage(_ user: User, replacing previous: StoredCredentials?) -> String {
        guard let previous, previous.userId != user.id else { return "Signed in as \(user.email)." }
        return "Signed in as \(user.email); replaced the saved session of \(previous.email)."
    }

    /// `text`, followed — when `deploy/compose`'s gateway (its record beside `paths`' files) is
    /// `gateway` and it keeps the mails in a directory — by where the `kind` email is and the
    /// `command` that takes its token.
    static func withMailNote(_ text: String, paths: ConfigPaths, gateway: String, kind: String, command: String) -> String {
        guard let note = ComposeRecord.load(paths: paths)?.mailNote(gateway: gateway, kind: kind, command: command)
        else { return text }
        return text + "\n" + note
    }

    /// Reads an ID token given as an argument, or from standard input when it is "-".
    static func idToken(_ argument: String) -> String {
        guard argument == "-" else { return argument }
        return String(decoding: ProcessContext.current.readStandardInput(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

extension AuthCommand {
    /// `auth signup`.
    struct SignUp: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(
            commandName: "signup", abstract: "Create an account; a verification email follows.")

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions
        /// `--password-stdin`.
        @OptionGroup var password: PasswordOptions
        /// The new account's email address.
        @Option(help: "The email address.") var email: String
        /// The name to show.
        @Option(help: "The name to show (optional).") var displayName: String?

        /// Makes the call and prints the answer.
        func run() async throws {
            var reader = password.reader
            let secret = try reader.readNew(prompt: "New password")
            let request = SignUpRequest(email: email, password: secret, displayName: displayName)
            let gateway = global.gateway
            let paths = try global.paths
            try await global.call(AuthContract.signUp, request) {
                AuthCommand.withMailNote(
                    "Created the account \($0.user.email). Open the link in the verification email, "
                        + "or run `shopctl auth verify TOKEN` with its token.",
                    paths: paths, gateway: gateway, kind: "verification", command: "shopctl auth verify TOKEN")
            }
        }
    }

    /// `auth verify TOKEN`.
    struct Verify: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(
            commandName: "verify", abstract: "Verify the email address with the token of the verification email.")

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions
        /// The token from the email (or its link), refused before anything is sent when empty.
        @Argument(help: "The token of the verification email, or the link that carries it.", transform: EmailToken.parse)
        var token: String

        /// Makes the call and prints the answer.
        func run() async throws {
            try await global.call(AuthContract.verifyEmail, VerifyEmailRequest(token: token)) { Self.confirmation($0.user.email) }
        }

        /// What a verified account is told, with the command that signs it in (the address
        /// quoted for the shell: `o'brien@example.com` is a valid one).
        static func confirmation(_ email: String) -> String {
            "Verified \(email). Sign in with `shopctl auth login --email \(ShellWord.quoted(email))`."
        }
    }

    /// `auth resend-verification`.
    struct ResendVerification: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(
            commandName: "resend-verification", abstract: "Send a new verification email.")

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions
        /// The account's address.
        @Option(help: "The email address.") var email: String

        /// Makes the call and prints the answer.
        func run() async throws {
            let gateway = global.gateway
            let paths = try global.paths
            try await global.call(AuthContract.resendVerification, ResendVerificationRequest(email: email)) { _ in
                AuthCommand.withMailNote(
                    "If \(email) has an unverified account, a new email is on its way.",
                    paths: paths, gateway: gateway, kind: "verification", command: "shopctl auth verify TOKEN")
            }
        }
    }

    /// `auth login`.
    struct Login: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(
            commandName: "login", abstract: "Sign in with email and password and keep the session.")

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions
        /// `--password-stdin`.
        @OptionGroup var password: PasswordOptions
        /// The account's address.
        @Option(help: "The email address.") var email: String

        /// Makes the call and prints the answer.
        func run() async throws {
            var reader = password.reader
            let secret = try reader.read(prompt: "Password")
            try await global.withContext { context in
                let reply = try await context.gateway.unary(
                    AuthContract.signIn, SignInRequest(email: email, password: secret))
                try await AuthCommand.signedIn(reply, context: context)
            }
        }
    }

    /// `auth login-google`.
    struct LoginGoogle: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(
            commandName: "login-google", abstract: "Sign in with a Google ID token.")

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions
        /// The ID token, or "-" for standard input.
        @Option(help: "The Google ID token (a JWT), or - to read it from standard input.") var idToken: String

        /// Makes the call and prints the answer.
        func run() async throws {
            let token = AuthCommand.idToken(idToken)
            try await global.withContext { context in
                let request = SignInWithIdTokenRequest(provider: .google, idToken: token)
                try await AuthCommand.signedIn(try await context.gateway.unary(AuthContract.signInWithIdToken, request), context: context)
            }
        }
    }

    /// `auth login-apple`.
    struct LoginApple: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(
            commandName: "login-apple", abstract: "Sign in with an Apple ID token.")

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions
        /// The ID token, or "-" for standard input.
        @Option(help: "The Apple ID token (a JWT), or - to read it from standard input.") var idToken: String
        /// The nonce whose SHA-256 the token carries.
        @Option(help: "The raw nonce the token's nonce was made from, if one was used.") var rawNonce: String?

        /// Makes the call and prints the answer.
        func run() async throws {
            let token = AuthCommand.idToken(idToken)
            try await global.withContext { context in
                let request = SignInWithIdTokenRequest(provider: .apple, idToken: token, rawNonce: rawNonce)
                try await AuthCommand.signedIn(try await context.gateway.unary(AuthContract.signInWithIdToken, request), context: context)
            }
        }
    }

    /// `auth logout`.
    struct Logout: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(
            commandName: "logout", abstract: "Sign out here (or everywhere with --all) and forget the session.")

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions
        /// Whether to end every session of the user.
        @Flag(help: "Sign out every session of this account, on every device.") var all = false

        /// Forgets the saved session whatever happens, after revoking it on the server when the
        /// gateway answers; says which of the two happened and exits 0 either way (signing out
        /// must work offline, as on a laptop with no network). Needs no `config.json`: without
        /// it the profile is `default` unless given, and nothing is revoked unless `--gateway`
        /// or `SHOP_GATEWAY` says where. A credentials file that cannot be read is deleted.
        func run() async throws {
            let resolution = try global.resolved()
            let store = CredentialsStore(paths: Self.profile(resolution))
            let output = Output(json: global.json)
            do {
                guard try store.load() != nil else {
                    output.message(Data("{}".utf8)) { "Not signed in." }
                    return
                }
            } catch {
                // No session can be read from it, so none can be revoked; deleting it is the sign-out.
                try await store.forgetSession()
                output.message(Data("{}".utf8)) {
                    "Signed out here: deleted \(store.file.path), which could not be read, so no session was revoked on the server."
                }
                return
            }
            var raw = Data("{}".utf8)
            var unrevoked: String?
            switch resolution.gateway {
            case .success(let choice):
                do {
                    raw = try await global.withContext(paths: store.paths, gateway: choice.address) { context in
                        try await context.gateway.unary(AuthContract.signOut, SignOutRequest(scope: all ? .global : .local)).raw
                    }
                } catch let error as RPCError where error.code == .unauthenticated {
                    // The session was already over on the server; forgetting it is all that is left.
                } catch let error as ShopctlError where error == .sessionEnded {
                    // The refresh found the session over and deleted the credentials.
                } catch is CancellationError {
                    throw CancellationError()
                } catch {
                    unrevoked = Self.cause(of: error)
                }
            case .failure(let error):
                unrevoked = "the gateway is unknown: \(error.message)"
            }
            try await store.forgetSession()
            output.message(raw) { Self.message(all: all, unrevoked: unrevoked) }
        }

        /// The files of the profile to sign out of: the one in use — or, when that had to come
        /// from a `config.json` that cannot be read, `default`, saying so on standard error.
        static func profile(_ resolution: ProfileResolution) -> ConfigPaths {
            switch resolution.paths {
            case .success(let paths):
                return paths
            case .failure(let error):
                Output.error(ProfileResolution.note(error, instead: "Signing out of profile default; give --profile NAME for another."))
                return ConfigPaths(base: resolution.base)
            }
        }

        /// What the revocation's failure was, in a few words: the server's message, or ours.
        static func cause(of error: any Error) -> String {
            switch error {
            case let error as RPCError: error.message.isEmpty ? error.code.name : error.message
            case let error as ShopctlError: error.message
            default: "\(error)"
            }
        }

        /// What `auth logout` says: signed out (everywhere), or — when the revocation failed for
        /// `unrevoked` — that only the saved session here was dropped, and what that leaves.
        static func message(all: Bool, unrevoked: String?) -> String {
            guard let unrevoked else { return all ? "Signed out everywhere." : "Signed out." }
            let left = all
                ? "your other sessions stay signed in; sign in again and run `shopctl auth logout --all` to end them"
                : "it stays valid there until it expires"
            let cause = unrevoked.trimmingCharacters(in: CharacterSet(charactersIn: ". "))
            return "Signed out here: deleted the saved session, but could not revoke it on the server (\(cause)), so \(left)."
        }
    }

    /// `auth whoami`.
    struct WhoAmI: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(commandName: "whoami", abstract: "Show the signed-in user.")

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions

        /// Makes the call and prints the answer.
        func run() async throws {
            try await global.call(AuthContract.getCurrentUser, Empty()) { HumanText.user($0.user) }
        }
    }

    /// `auth reset-password`.
    struct ResetPassword: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(
            commandName: "reset-password", abstract: "Email a password-reset link.")

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions
        /// The account's address.
        @Option(help: "The email address.") var email: String

        /// Makes the call and prints the answer.
        func run() async throws {
            let gateway = global.gateway
            let paths = try global.paths
            try await global.call(AuthContract.requestPasswordReset, RequestPasswordResetRequest(email: email)) { _ in
                AuthCommand.withMailNote(
                    "If \(email) has an account, a reset email is on its way; then run `shopctl auth confirm-reset TOKEN`.",
                    paths: paths, gateway: gateway, kind: "reset", command: "shopctl auth confirm-reset TOKEN")
            }
        }
    }

    /// `auth confirm-reset TOKEN`.
    struct ConfirmReset: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(
            commandName: "confirm-reset", abstract: "Set a new password with the token of the reset email.")

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions
        /// `--password-stdin`.
        @OptionGroup var password: PasswordOptions
        /// The token from the email (or its link), refused before anything is sent when empty.
        @Argument(help: "The token of the reset email, or the link that carries it.", transform: EmailToken.parse)
        var token: String

        /// Makes the call and prints the answer.
        func run() async throws {
            var reader = password.reader
            let secret = try reader.readNew(prompt: "New password")
            try await global.withContext { context in
                let reply = try await context.gateway.unary(
                    AuthContract.resetPassword, ResetPasswordRequest(token: token, newPassword: secret))
                // A reset signs out every session, this one included.
                try await context.store.forgetSession()
                context.output.message(reply.raw) { "Password changed. Sign in with `shopctl auth login`." }
            }
        }
    }

    /// `auth change-password`.
    struct ChangePassword: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(
            commandName: "change-password",
            abstract: "Change the password; other sessions are signed out.",
            discussion: "With --password-stdin, the first line is the current password and the second the new one.")

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions
        /// `--password-stdin`.
        @OptionGroup var password: PasswordOptions

        /// Makes the call and prints the answer.
        func run() async throws {
            var reader = password.reader
            let current = try reader.read(prompt: "Current password")
            let new = try reader.readNew(prompt: "New password")
            try await global.withContext { context in
                let reply = try await context.gateway.unary(
                    AuthContract.changePassword, ChangePasswordRequest(currentPassword: current, newPassword: new))
                try await context.store.replaceSession(with: StoredCredentials(reply.message))
                context.output.message(reply.raw) { "Password changed; other sessions were signed out." }
            }
        }
    }

    /// `auth delete-account`.
    struct DeleteAccount: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(
            commandName: "delete-account", abstract: "Delete the account and everything signed in with it.")

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions
        /// `--password-stdin`.
        @OptionGroup var password: PasswordOptions
        /// Whether the account has no password (Google or Apple sign-in only).
        @Flag(help: "The account signs in with Google or Apple only: no password to give (needs a sign-in within 5 minutes).")
        var noPassword = false

        /// Refuses bad values before anything is sent.
        func validate() throws {
            if noPassword && password.passwordStdin {
                throw ValidationError("--no-password and --password-stdin do not go together.")
            }
        }

        /// Makes the call and prints the answer.
        func run() async throws {
            var reader = password.reader
            let secret = noPassword ? nil : try reader.read(prompt: "Password (to confirm the deletion)")
            try await global.withContext { context in
                let reply = try await context.gateway.unary(AuthContract.deleteAccount, DeleteAccountRequest(password: secret))
                try await context.store.forgetSession()
                context.output.message(reply.raw) { "The account was deleted." }
            }
        }
    }

    /// `auth watch`.
    struct Watch: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(
            commandName: "watch", abstract: "Print the session's state as it changes, until Ctrl-C or sign-out.")

        /// `--gateway`, `--json`, `--timeout`.
        @OptionGroup var global: GlobalOptions

        /// Makes the call and prints the answer.
        func run() async throws {
            try await global.watch(AuthContract.watchAuthState, Empty()) { HumanText.authState($0) }
        }
    }
}
