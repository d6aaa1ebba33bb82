import Contracts
import Credentials
import Foundation
import Logging
import RPC
import ServiceKit

/// The handlers of `shop.auth.v1.AuthService` (API.md §3) and of the internal
/// `SessionRevocationService`. Stateless itself: its dependencies are stored properties, the
/// state lives in the store, the throttles and the session events.
///
/// The methods are in `AuthService+Accounts.swift` (sign-up, verification, profile, deletion),
/// `AuthService+Sessions.swift` (sign-in, refresh, sign-out, the auth-state stream) and
/// `AuthService+Passwords.swift` (reset and change); `AuthService+Routes.swift` wires them to
/// a router.
struct AuthService: Sendable {
    /// The database.
    let store: AuthStore
    /// Mints access and refresh tokens.
    let sessions: SessionIssuer
    /// The keys `GetJwks` publishes: the signing key's public half first, then retired ones.
    let publishedKeys: [Contracts.JWK]
    /// Hashes and verifies passwords (scrypt).
    let hasher: PasswordHasher
    /// Admits password hashing fairly to its bounded threads.
    let hashScheduler: HashScheduler
    /// API.md's password rules.
    let policy: PasswordPolicy
    /// The email texts.
    let emails: AuthEmails
    /// Wakes the outbox's delivery loop when an email is queued.
    let mailQueued: @Sendable () -> Void
    /// Reset and verification emails asked for by address, handled after the answer.
    let emailRequests: EmailRequestQueue
    /// Google and Apple sign-in.
    let providers: IdentityProviders
    /// Sign-in failure counting.
    let throttle: SignInThrottle
    /// Request rate limits.
    let limits: AuthRateLimits
    /// Wakes `WatchAuthState` streams of revoked sessions.
    let events: SessionEvents
    /// The internal API key, which makes `x-forwarded-for` trusted; nil when none is set.
    let internalKey: String?
    /// Sign-ups, sign-ins and emails counted.
    let metrics: AuthMetrics

    /// How recently an account without a password must have signed in to delete itself.
    static let recentLoginWindow: Int64 = 5 * 60

    // MARK: Helpers shared by the handlers

    /// Runs a password hash or verification for `caller` when the scheduler admits it.
    func hashing<T: Sendable>(
        for caller: HashScheduler.Caller, _ body: @escaping @Sendable (PasswordHasher) throws -> T
    ) async throws -> T {
        let hasher = hasher
        return try await hashScheduler.run(for: caller) { try body(hasher) }
    }

    /// When a sign-in held back by the throttle stops waiting and answers `OVERLOADED`: a
    /// moment before the call's deadline, so that the client hears why rather than timing out.
    func throttleGiveUp(_ context: ServerContext) -> ContinuousClock.Instant? {
        context.deadline.map { $0 - .milliseconds(200) }
    }

    /// Who a hash is for: the client address of `context`, `account`, and the call's deadline.
    func hashCaller(_ context: ServerContext, account: String) -> HashScheduler.Caller {
        HashScheduler.Caller(address: clientAddress(context), account: account, deadline: context.deadline)
    }

    /// The stored hash of `password`, after the policy allowed it for `email`.
    func newPasswordHash(_ password: String, email: String, field: RequestField, context: ServerContext) async throws -> String {
        try InputRules.checkPasswordSize(password, field: field)
        if let problem = policy.check(password: password, email: email) {
            throw field.invalid(problem.requirement, reason: .weakPassword)
        }
        return try await hashing(for: hashCaller(context, account: email)) { try $0.hash(password: password) }
    }

    /// Whether `password` matches `storedHash` (a dummy hash when the account has none, so that
    /// the answer takes as long either way); re-hashes a match stored at a lower cost. The
    /// hashing counts against `account` (the email as given when there is no user).
    func checkPassword(
        _ password: String, user: UserRecord?, account: String, context: ServerContext
    ) async throws -> Bool {
        let stored = user?.passwordHash
        let caller = hashCaller(context, account: account)
        let (valid, needsRehash) = try await hashing(for: caller) { hasher in
            hasher.verify(password: password, against: stored ?? hasher.dummyHash)
        }
        guard valid, let user, let stored else {
            hashScheduler.recordFailure(of: caller)
            return false
        }
        hashScheduler.recordSuccess(of: caller)
        if needsRehash {
            let upgraded = try await hashing(for: caller) { try $0.hash(password: password) }
            try await store.replacePasswordHash(userID: user.id, old: stored, new: upgraded)
        }
        return true
    }

    /// Queues a verification email for `user` unless the per-recipient limit says not.
    func sendVerification(to user: UserRecord) async throws {
        guard !user.email.isEmpty, limits.perRecipient.allow(user.email) else { return }
        try await sendLink(.verifyEmail, to: user)
    }

    /// Stores a fresh single-use token for `user` and queues the email carrying it.
    func sendLink(_ purpose: EmailTokenPurpose, to user: UserRecord) async throws {
        let token = OpaqueToken.generate()
        let email =
            switch purpose {
            case .verifyEmail: emails.verification(to: user.email, token: token)
            case .resetPassword: emails.passwordReset(to: user.email, token: token)
            }
        try await store.issueEmailToken(
            userID: user.id, purpose: purpose, tokenHash: OpaqueToken.hash(token), email: email)
        metrics.countMail(purpose, .queued)
        mailQueued()
    }

    /// Queues the email `kind` for `email` to be looked at after the call is answered
    /// (``EmailRequestQueue``): the caller gets the same `{}` as fast whether or not the
    /// address has an account.
    func deferEmail(_ kind: EmailRequestQueue.Request.Kind, to email: String, context: ServerContext) {
        if !emailRequests.submit(EmailRequestQueue.Request(kind: kind, email: email)) {
            context.logger.warning("email request queue full; request dropped", metadata: ["kind": "\(kind)"])
        }
    }

    /// Handles one deferred email request: a reset link for an account with that address
    /// (within the per-recipient limit), or a verification link for an unverified one; nothing
    /// for an unknown address. Failures are logged: the caller was answered long ago.
    func perform(_ request: EmailRequestQueue.Request, logger: Logger) async {
        do {
            guard let user = try await store.user(email: request.email) else { return }
            switch request.kind {
            case .passwordReset:
                if limits.perRecipient.allow(user.email) { try await sendLink(.resetPassword, to: user) }
            case .verification:
                if !user.emailVerified { try await sendVerification(to: user) }
            }
        } catch {
            logger.error("cannot queue a requested email", metadata: ["kind": "\(request.kind)", "error": "\(error)"])
        }
    }

    /// A new session for `user`, signed in by `method`.
    func startSession(for user: UserRecord, method: String) async throws -> Session {
        let refresh = sessions.newRefreshToken()
        let session = try await store.createSession(userID: user.id, method: method, refreshHash: refresh.hash)
        return try sessions.session(for: user, sessionID: session.id, refreshToken: refresh.token)
    }

    /// The caller's stored account; `SESSION_REVOKED` when it no longer exists.
    func currentUser(_ context: ServerContext) async throws -> (AuthenticatedUser, UserRecord) {
        let caller = try context.requireUser()
        guard let user = try await store.user(id: caller.id) else {
            throw AuthError.accountGone
        }
        return (caller, user)
    }

    /// Tells watchers that `sessionIDs` were revoked.
    func announceRevoked(_ sessionIDs: [String]) {
        if !sessionIDs.isEmpty { events.revoked(sessionIDs) }
    }

    /// The address rate limits and throttling count a call against: the connection's peer, or
    /// the first `x-forwarded-for` entry when the caller proved to be the gateway (internal key).
    func clientAddress(_ context: ServerContext) -> String {
        if let internalKey, let presented = context.metadata[MetadataKey.apiKey],
            ConstantTime.equals(presented, internalKey),
            let forwarded = context.metadata[MetadataKey.forwardedFor]?.split(separator: ",").first
        {
            return forwarded.trimmingCharacters(in: .whitespaces)
        }
        return context.peerHost
    }
}

/// The request rate limits of auth-svc (README "Choices").
struct AuthRateLimits: Sendable {
    /// SignUp per client address.
    let signUp = RateLimiter(burst: 10, refillInterval: .seconds(30))
    /// ResendVerification and RequestPasswordReset per client address.
    let emailRequests = RateLimiter(burst: 5, refillInterval: .seconds(30))
    /// Emails per recipient address, answered silently.
    let perRecipient = RateLimiter(burst: 3, refillInterval: .seconds(300))

    /// Throws `RATE_LIMITED` when `limiter` has no token left for `key`.
    static func check(_ limiter: RateLimiter, _ key: String) throws(RPCError) {
        if let wait = limiter.admit(key) {
            throw AuthError.rateLimited(retryAfter: wait).rpcError
        }
    }
}
