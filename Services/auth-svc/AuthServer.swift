import Credentials
import Foundation
import Storage
import Logging
import Mail
import RPC
import RPCHTTP2
import ServiceKit
import Telemetry

/// auth-svc wired together: the store, the keys, the handlers behind their interceptors, the
/// server, and the loops that run beside it (mail delivery, pruning). Reads ``Core``'s
/// members as its own (`server.store`).
@dynamicMemberLookup
struct AuthServer: ServiceServer {
    /// The RPC server (not yet listening), serving ``Core/router``.
    let server: HTTP2Server
    /// Everything but the socket.
    let core: Core

    /// ``core``'s member at `path`: `server.store` is `server.core.store`.
    subscript<Value>(dynamicMember path: KeyPath<Core, Value>) -> Value { core[keyPath: path] }

    /// auth-svc without its socket: the complete router (interceptors, every method, health
    /// and Describe) and what it serves from. The process serves it over HTTP/2; tests can
    /// call ``router`` in-process.
    struct Core: ServiceCore {
        /// Every method auth-svc serves, behind its interceptors.
        let router: Router
        /// The health of the process.
        let health: HealthMonitor
        /// The database.
        let store: AuthStore
        /// The mail delivery loop.
        let outbox: MailOutbox
        /// Wakes `WatchAuthState` streams when sessions are revoked.
        let events: SessionEvents
        /// The threads that hash passwords.
        let hashPool: BlockingPool
        /// The handlers, for the deferred email requests.
        let service: AuthService
        /// The logger.
        let logger: Logger
        /// What `/metrics` serves (nil under `--no-metrics`); the domain metrics are in it.
        let metrics: MetricsRegistry?
    }

    /// Builds auth-svc without a socket: creates the data directory (0700), opens and migrates
    /// the database, loads or generates the signing key and the internal key, starts the
    /// hashing threads (ended by ``Core/close()``), makes the router.
    ///
    /// - Throws: `StartupError` with an actionable message.
    static func make(configuration: AuthConfiguration, logger: Logger) async throws -> Core {
        try ServiceMain.prepareDataDirectory(configuration.dataDirectory)
        let keys: SigningKeys
        do {
            keys = try SigningKeys.load(configuration)
        } catch {
            throw StartupError("cannot load or create the signing key \(configuration.resolvedSigningKeyPath): \(error)")
        }
        let internalKey = try configuration.internalKey ?? ServiceSecret.internalKey(dataDirectory: configuration.dataDirectory)
        guard let parameters = ScryptParameters(logRounds: configuration.scryptLogN, blockSize: 8, parallelism: 1) else {
            throw StartupError("--scrypt-log-n \(configuration.scryptLogN) is out of range")
        }
        let store: AuthStore
        do {
            store = try await AuthStore.open(location: configuration.databaseLocation, metrics: configuration.metrics)
        } catch {
            throw StartupError("cannot open the database \(configuration.databaseLocation): \(error)")
        }

        let transport: any MailTransport =
            if let smtp = configuration.smtp {
                SMTPTransport(host: smtp.host, port: smtp.port, heloName: "storefront-auth")
            } else {
                MailDirectoryTransport(directory: configuration.mailDirectory)
            }
        let events = SessionEvents()
        let metrics = AuthMetrics(registry: configuration.metrics, events: events)
        let outbox = MailOutbox(
            store: store, transport: transport, sender: configuration.mailFrom,
            logger: Logger(label: "auth-svc.mail"), metrics: metrics)
        // The scheduler hands the pool no more jobs than it has threads; its queue is the scheduler's.
        let hashPool = BlockingPool(
            threads: configuration.hashThreads, name: "password-hash", queueLimit: configuration.hashThreads, niceness: 10)
        let service = AuthService(
            store: store,
            sessions: SessionIssuer(
                signer: JWTSigner(key: keys.current), issuer: configuration.issuer, audience: configuration.audience),
            publishedKeys: keys.published,
            hasher: PasswordHasher(parameters: parameters),
            hashScheduler: HashScheduler(pool: hashPool, limits: configuration.hashLimits),
            policy: PasswordPolicy(),
            emails: AuthEmails(linkBaseURL: configuration.linkBaseURL),
            mailQueued: { outbox.wake() },
            emailRequests: EmailRequestQueue(),
            providers: IdentityProviders(configuration.providers),
            throttle: SignInThrottle(store: store),
            limits: AuthRateLimits(),
            events: events,
            internalKey: internalKey,
            metrics: metrics)

        var router = Router()
        let verifier = AccessTokenVerifier(
            issuer: configuration.issuer, audience: configuration.audience, source: keys.keySource,
            revocations: StoredSessionRevocations(store: store))
        router.addInterceptor(APIKeyInterceptor(adminKey: nil, internalKey: internalKey))
        router.addInterceptor(AuthenticationInterceptor(verifier: verifier))
        service.register(on: &router)
        let health = HealthMonitor()
        router.addStandardServices(health: health)
        return Core(
            router: router, health: health, store: store, outbox: outbox, events: events, hashPool: hashPool,
            service: service, logger: logger, metrics: configuration.metrics)
    }

    /// Builds everything, the server included; nothing listens until
    /// ``ServiceMain/run(_:logger:)`` starts it.
    static func build(configuration: AuthConfiguration, logger: Logger) async throws -> AuthServer {
        let core = try await make(configuration: configuration, logger: logger)
        let server = try ServiceMain.makeServer(router: core.router, configuration: configuration, logger: logger)
        return AuthServer(server: server, core: core)
    }
}

extension AuthServer.Core {
    /// Mail delivery, the deferred email requests and pruning, beside the server.
    var companions: [@Sendable () async -> Void] { [outbox.run, handleEmailRequests, pruneStore] }

    /// Ends the hashing threads and closes the database; after the server has stopped.
    func close() async {
        hashPool.shutdown()
        await store.database.close()
    }

    /// Handles the reset and verification emails asked for by address, after their answers.
    private func handleEmailRequests() async {
        let logger = Logger(label: "auth-svc.mail")
        await service.emailRequests.run { await service.perform($0, logger: logger) }
    }

    /// Every ten minutes, drops revocation-feed entries and sessions no token can use any
    /// more, and the rows of email tokens long expired.
    private func pruneStore() async {
        while !Task.isCancelled {
            do {
                try await store.pruneSessions()
                try await store.pruneEmailTokens()
            } catch {
                logger.warning("cannot prune sessions and email tokens", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: .seconds(600))
        }
    }
}
