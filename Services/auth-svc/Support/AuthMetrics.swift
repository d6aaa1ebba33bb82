import Contracts
import RPC
import Telemetry

/// auth-svc's domain metrics (issue 31): accounts signed up, sign-ins by method and outcome,
/// emails by kind and outcome, and the open `WatchAuthState` streams.
///
/// Every series is registered when the service is built, so handlers only add to a counter
/// they already hold — no lock, no allocation. Under `--no-metrics` the counters live in a
/// registry nobody reads. Thread-safe: counters are atomics and the tables never change.
struct AuthMetrics: Sendable {
    /// How a sign-in ended; only outcomes decided about the caller's credentials are counted
    /// (a malformed request, an overloaded server or an internal error shows in
    /// `rpc_server_calls_total` instead).
    enum SignInOutcome: String, Sendable, CaseIterable {
        /// A session was issued.
        case success
        /// Unknown email address, wrong password, or an ID token that failed its checks.
        case invalidCredentials = "invalid_credentials"
        /// The password matched but the address is not verified yet (a new link was queued).
        case emailNotVerified = "email_not_verified"
        /// Refused by the throttle without looking at the password.
        case tooManyAttempts = "too_many_attempts"
        /// An ID token whose email address belongs to a password account.
        case emailInUse = "email_in_use"
    }

    /// What became of an email in the outbox.
    enum MailOutcome: String, Sendable, CaseIterable {
        /// Written to the outbox (with the token it carries).
        case queued
        /// Delivered and removed from the outbox.
        case sent
        /// One delivery attempt failed (it is retried while its link works).
        case failed
        /// Removed undelivered after a failure once its link had expired.
        case givenUp = "given_up"
    }

    /// The `method` label of a password sign-in; ID-token sign-ins carry their provider's name.
    static let passwordMethod = "password"

    /// The outcomes each sign-in method can have: a password sign-in is never `email_in_use`,
    /// an ID-token one never throttled or unverified. The providers are those auth-svc can be
    /// configured with (``ProviderConfiguration``).
    static let signInOutcomes: [(method: String, outcomes: [SignInOutcome])] = [
        (passwordMethod, [.success, .invalidCredentials, .emailNotVerified, .tooManyAttempts]),
        (IdentityProvider.google.rawValue, [.success, .invalidCredentials, .emailInUse]),
        (IdentityProvider.apple.rawValue, [.success, .invalidCredentials, .emailInUse]),
    ]

    /// `auth_sign_ups_total`: password accounts created by `SignUp`.
    private let signUps: Counter
    /// `auth_sign_ins_total{method,outcome}`, by method and outcome.
    private let signIns: [String: [SignInOutcome: Counter]]
    /// `auth_mails_total{kind,outcome}`, by purpose and outcome.
    private let mails: [EmailTokenPurpose: [MailOutcome: Counter]]

    /// The metrics, registered in `registry` (a throwaway one when nil); `auth_watchers_open`
    /// reads `events`' waiting streams when scraped (not registered without a registry).
    init(registry served: MetricsRegistry?, events: SessionEvents? = nil) {
        let registry = served ?? MetricsRegistry()
        signUps = registry.counter("auth_sign_ups_total", help: "Password accounts created by SignUp.")
        var signIns: [String: [SignInOutcome: Counter]] = [:]
        for (method, outcomes) in Self.signInOutcomes {
            for outcome in outcomes {
                signIns[method, default: [:]][outcome] = registry.counter(
                    "auth_sign_ins_total", help: "Sign-ins by method (password or the ID token's provider) and outcome.",
                    labels: ["method": method, "outcome": outcome.rawValue])
            }
        }
        self.signIns = signIns
        var mails: [EmailTokenPurpose: [MailOutcome: Counter]] = [:]
        for purpose in [EmailTokenPurpose.verifyEmail, .resetPassword] {
            for outcome in MailOutcome.allCases {
                mails[purpose, default: [:]][outcome] = registry.counter(
                    "auth_mails_total", help: "Emails queued, sent, failed (per attempt) and given up, by kind.",
                    labels: ["kind": Self.kindLabel(purpose), "outcome": outcome.rawValue])
            }
        }
        self.mails = mails
        if let served, let events {
            served.sampled(
                "auth_watchers_open", type: .gauge, help: "WatchAuthState streams waiting for their session's end."
            ) { Double(events.watcherCount) }
        }
    }

    /// The `kind` label of an email for `purpose`.
    static func kindLabel(_ purpose: EmailTokenPurpose) -> String {
        switch purpose {
        case .verifyEmail: "verification"
        case .resetPassword: "password_reset"
        }
    }

    /// Counts one password account created.
    func countSignUp() { signUps.increment() }

    /// Counts one email of `purpose` reaching `outcome`.
    func countMail(_ purpose: EmailTokenPurpose, _ outcome: MailOutcome) {
        mails[purpose]?[outcome]?.increment()
    }

    /// Runs the sign-in `body` by `method` and counts how it ended: a session as `success`, a
    /// refusal by its reason (``SignInOutcome/init(refusal:)``); other failures not at all.
    func countingSignIn(method: String, _ body: () async throws -> Session) async throws -> Session {
        do {
            let session = try await body()
            signIns[method]?[.success]?.increment()
            return session
        } catch {
            if let outcome = SignInOutcome(refusal: error) { signIns[method]?[outcome]?.increment() }
            throw error
        }
    }
}

extension AuthMetrics.SignInOutcome {
    /// The outcome a sign-in refused with `error` had, read from its API.md reason; nil for an
    /// error that decided nothing about the credentials.
    init?(refusal error: any Error) {
        switch RPCError(converting: error).reason {
        case AuthReason.invalidCredentials.rawValue, AuthReason.invalidCredential.rawValue: self = .invalidCredentials
        case AuthReason.emailNotVerified.rawValue: self = .emailNotVerified
        case AuthReason.tooManyAttempts.rawValue: self = .tooManyAttempts
        case AuthReason.emailAlreadyInUse.rawValue: self = .emailInUse
        default: return nil
        }
    }
}
