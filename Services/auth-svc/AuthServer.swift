import Credentials
import Foundation
import Storage
import Logging
import Mail
import RPC
import RPCHTTP2
import ServiceKit

/// auth-svc wired together: the store, the keys, the handlers behind their interceptors, the
/// server, and the loops that run beside it (mail delivery, pruning).
struct AuthServer: Sendable {
    /// The RPC server (not yet listening).
    let server: HTTP2Server
    /// The health of the process.
    let health: HealthMonitor
    /// The database.
    let store: AuthStore
    /// The mail delivery loop.
    let outbox: MailOutbox
    /// The logger.
    let logger: Logger

    /// Builds everything `configuration` describes: creates the data directory (0700), opens
    /// and migrates the database, loads or generates the signing key and the internal key.
    ///
    /// - Throws: `AuthStartupError` with an actionable message.
    static func build(configuration: AuthConfiguration, logger: Logger) async throws -> AuthServer {
        do {
            try FileManager.default.createDirectory(
                atPath: configuration.dataDirectory, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        } catch {
            throw AuthStartupError("cannot create the data directory \(configuration.dataDirectory): \(error)")
        }
        let keys: SigningKeys
        do {
            keys = try SigningKeys.load(configuration)
        } catch {
            throw AuthStartupError("cannot load or create the signing key \(configuration.resolvedSigningKeyPath): \(error)")
        }
        let internalKey: String
        do {
            internalKey = try configuration.internalKey
                ?? ServiceSecret.resolve(
                    environmentName: "SHOP_INTERNAL_API_KEY", path: "\(configuration.dataDirectory)/internal-api-key")
        } catch {
            throw AuthStartupError("\(error)")
        }
        guard let parameters = ScryptParameters(logRounds: configuration.scryptLogN, blockSize: 8, parallelism: 1) else {
            throw AuthStartupError("--scrypt-log-n \(configuration.scryptLogN) is out of range")
        }
        let store: AuthStore
        do {
            store = try await AuthStore.open(path: configuration.databasePath)
        } catch {
            throw AuthStartupError("cannot open the database \(configuration.databasePath): \(error)")
        }

        let transport: any MailTransport =
            if let smtp = configuration.smtp {
                SMTPTransport(host: smtp.host, port: smtp.port, heloName: "storefront-auth")
            } else {
                MailDirectoryTransport(directory: configuration.mailDirectory)
            }
        let outbox = MailOutbox(
            store: store, transport: transport, sender: configuration.mailFrom,
            logger: Logger(label: "auth-svc.mail"))
        let service = AuthService(
            store: store,
            sessions: SessionIssuer(
                signer: JWTSigner(key: keys.current), issuer: configuration.issuer, audience: configuration.audience),
            publishedKeys: keys.published,
            hasher: PasswordHasher(parameters: parameters),
            hashPool: BlockingPool(
                threads: configuration.hashThreads, name: "password-hash", queueLimit: configuration.hashQueueLimit,
                niceness: 10),
            policy: PasswordPolicy(),
            emails: AuthEmails(linkBaseURL: configuration.linkBaseURL),
            mailQueued: { outbox.wake() },
            providers: IdentityProviders(configuration.providers),
            throttle: SignInThrottle(),
            limits: AuthRateLimits(),
            events: SessionEvents(),
            internalKey: internalKey)

        var router = Router()
        let verifier = AccessTokenVerifier(
            issuer: configuration.issuer, audience: configuration.audience, source: keys.keySource,
            revocations: StoredSessionRevocations(store: store))
        router.addInterceptor(APIKeyInterceptor(adminKey: nil, internalKey: internalKey))
        router.addInterceptor(AuthenticationInterceptor(verifier: verifier))
        service.register(on: &router)
        let health = HealthMonitor()
        router.addStandardServices(health: health)

        var serverConfiguration = ServerConfiguration(host: configuration.host, port: configuration.port)
        serverConfiguration.gracePeriod = configuration.gracePeriod
        let server = try HTTP2Server(configuration: serverConfiguration, router: router, logger: logger)
        return AuthServer(server: server, health: health, store: store, outbox: outbox, logger: logger)
    }

    /// Serves until SIGTERM or SIGINT, with mail delivery and pruning beside the server; then
    /// drains, stops the loops and closes the database.
    func run() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await outbox.run() }
            group.addTask { await pruneSessions() }
            try await ServiceRunner.run(server, health: health, logger: logger)
            group.cancelAll()
        }
        await store.database.close()
    }

    /// Every ten minutes, drops revocation-feed entries and sessions no token can use any more.
    private func pruneSessions() async {
        while !Task.isCancelled {
            do {
                try await store.pruneSessions()
            } catch {
                logger.warning("cannot prune sessions", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: .seconds(600))
        }
    }
}

/// A startup or configuration failure, with a message saying what to fix.
struct AuthStartupError: Error, CustomStringConvertible {
    /// What went wrong and what to do.
    let description: String

    init(_ description: String) { self.description = description }
}
