@testable import auth_svc
import Contracts
import Credentials
import Logging
import RPC
import ServiceKit

/// auth-svc's handlers wired in process over an in-memory store, for tests that call them
/// without sockets.
extension AuthService {
    /// Handlers over `store` with cheap scrypt, no providers, no internal key, and the given
    /// email request queue and hashing pool.
    static func inProcess(
        store: AuthStore, emailRequests: EmailRequestQueue = EmailRequestQueue(),
        hashPool: BlockingPool = BlockingPool(threads: 1, name: "test-hash")
    ) throws -> AuthService {
        AuthService(
            store: store,
            sessions: SessionIssuer(signer: JWTSigner(key: try SigningKey.generate()), issuer: "iss", audience: "aud"),
            publishedKeys: [],
            hasher: PasswordHasher(parameters: ScryptParameters(logRounds: 10, blockSize: 8, parallelism: 1)!),
            hashScheduler: HashScheduler(pool: hashPool),
            policy: PasswordPolicy(),
            emails: AuthEmails(linkBaseURL: "https://shop.test"),
            mailQueued: {},
            emailRequests: emailRequests,
            providers: IdentityProviders([]),
            throttle: SignInThrottle(store: store),
            limits: AuthRateLimits(),
            events: SessionEvents(),
            internalKey: nil,
            metrics: AuthMetrics(registry: nil))
    }

    /// A server context for a call of `method` from `peer`, as the transport would make it.
    static func context(for method: MethodInfo, peer: String = "192.0.2.1:5000") -> ServerContext {
        ServerContext(
            method: method, metadata: Metadata(), deadline: nil, requestID: "test", peer: peer,
            logger: Logger(label: "auth-unit-test") { _ in SwiftLogNoOpLogHandler() })
    }
}
