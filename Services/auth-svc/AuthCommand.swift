import ArgumentParser
import Foundation
import ServiceKit
import RPC

/// The `auth-svc` executable: accounts, sessions and keys (API.md §3).
struct AuthCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "auth-svc",
        abstract: "Serves shop.auth.v1.AuthService: accounts, email verification, sessions, Google and Apple sign-in.")

    private static let environment = ProcessInfo.processInfo.environment

    @OptionGroup var options: ServiceOptions

    /// `--database-url`, `--database-password-file`: PostgreSQL instead of SQLite.
    @OptionGroup var database: DatabaseFlags

    @Option(help: "The iss claim of access tokens (env SHOP_AUTH_ISSUER).")
    var issuer = environment["SHOP_AUTH_ISSUER"] ?? "storefront-auth"

    @Option(help: "The aud claim of access tokens (env SHOP_AUTH_AUDIENCE).")
    var audience = environment["SHOP_AUTH_AUDIENCE"] ?? "storefront"

    @Option(help: "Signing key file, generated when missing; default <data-dir>/signing-key.json (env SHOP_SIGNING_KEY_FILE).")
    var signingKey: String?

    @Option(help: "SMTP server host:port; without it mail goes to <data-dir>/mail/*.eml (env SHOP_SMTP).")
    var smtp: String?

    @Option(help: "Sender of every email (env SHOP_MAIL_FROM).")
    var mailFrom = environment["SHOP_MAIL_FROM"] ?? "Storefront <no-reply@storefront.local>"

    @Option(
        name: [.customLong("public-url"), .customLong("link-base-url")],
        help: ArgumentHelp(
            "The gateway's public address, http(s)://host[:port][/path]: mailed links open <public-url>/verify-email?token=… and /reset-password?token=… (env SHOP_PUBLIC_URL; --link-base-url and SHOP_LINK_BASE_URL are older names for it; default \(AuthConfiguration.defaultPublicURL)).",
            valueName: "url"))
    var publicURL: String?

    @Option(help: "Google client ids, comma-separated; enables Google sign-in (env SHOP_GOOGLE_CLIENT_ID).")
    var googleClientId: String?

    @Option(help: "Google's JWK Set: a file path or URL (env SHOP_GOOGLE_JWKS).")
    var googleJwks: String?

    @Option(help: "Apple client ids (service/bundle ids), comma-separated; enables Apple sign-in (env SHOP_APPLE_CLIENT_ID).")
    var appleClientId: String?

    @Option(help: "Apple's JWK Set: a file path or URL (env SHOP_APPLE_JWKS).")
    var appleJwks: String?

    @Option(help: "Threads that hash passwords; default one per core (env SHOP_HASH_THREADS).")
    var hashThreads = Int(environment["SHOP_HASH_THREADS"] ?? "") ?? ProcessInfo.processInfo.activeProcessorCount

    @Option(help: "Password hashes that may wait for a thread in all; beyond, OVERLOADED (env SHOP_HASH_QUEUE_LIMIT).")
    var hashQueueLimit = Int(environment["SHOP_HASH_QUEUE_LIMIT"] ?? "") ?? HashScheduler.Limits().queueLimit

    @Option(help: "Password hashes of one client address that may wait (env SHOP_HASH_QUEUE_PER_ADDRESS).")
    var hashQueuePerAddress = Int(environment["SHOP_HASH_QUEUE_PER_ADDRESS"] ?? "") ?? HashScheduler.Limits().perAddress

    @Option(help: "Password hashes of one account that may wait (env SHOP_HASH_QUEUE_PER_ACCOUNT).")
    var hashQueuePerAccount = Int(environment["SHOP_HASH_QUEUE_PER_ACCOUNT"] ?? "") ?? HashScheduler.Limits().perAccount

    @Option(help: "Seconds a password hash may wait for a thread, whatever the deadline (env SHOP_HASH_MAX_WAIT).")
    var hashMaxWait = Double(environment["SHOP_HASH_MAX_WAIT"] ?? "") ?? 5

    @Option(help: "scrypt cost exponent, N = 2^n; 17 is OWASP's; lower only for tests (env SHOP_SCRYPT_LOG_N).")
    var scryptLogN = Int(environment["SHOP_SCRYPT_LOG_N"] ?? "") ?? 17

    mutating func validate() throws {
        // Optional settings fall back to the environment here (a flag wins).
        signingKey = signingKey ?? Self.environment["SHOP_SIGNING_KEY_FILE"]
        smtp = smtp ?? Self.environment["SHOP_SMTP"]
        googleClientId = googleClientId ?? Self.environment["SHOP_GOOGLE_CLIENT_ID"]
        googleJwks = googleJwks ?? Self.environment["SHOP_GOOGLE_JWKS"]
        appleClientId = appleClientId ?? Self.environment["SHOP_APPLE_CLIENT_ID"]
        appleJwks = appleJwks ?? Self.environment["SHOP_APPLE_JWKS"]
        publicURL = Self.publicURL(flag: publicURL, environment: Self.environment)
        if let problem = AuthConfiguration.problem(withPublicURL: publicURL ?? "") {
            throw ValidationError("--public-url (SHOP_PUBLIC_URL) \(problem).")
        }
        if let smtp, (SocketAddressText(smtp)?.port ?? 0) == 0 {
            throw ValidationError("--smtp must be host:port, e.g. 127.0.0.1:25.")
        }
        if (googleClientId == nil) != (googleJwks == nil) {
            throw ValidationError("Google sign-in needs both --google-client-id and --google-jwks.")
        }
        if (appleClientId == nil) != (appleJwks == nil) {
            throw ValidationError("Apple sign-in needs both --apple-client-id and --apple-jwks.")
        }
        guard (1...256).contains(hashThreads) else { throw ValidationError("--hash-threads must be 1...256.") }
        guard (1...100_000).contains(hashQueueLimit), (1...100_000).contains(hashQueuePerAddress),
            (1...100_000).contains(hashQueuePerAccount)
        else {
            throw ValidationError("--hash-queue-limit, --hash-queue-per-address and --hash-queue-per-account must be 1...100000.")
        }
        guard hashMaxWait > 0, hashMaxWait <= 3600 else { throw ValidationError("--hash-max-wait must be in (0, 3600] seconds.") }
        guard (10...22).contains(scryptLogN) else { throw ValidationError("--scrypt-log-n must be 10...22.") }
    }

    /// The configuration the flags describe.
    var authConfiguration: AuthConfiguration {
        var configuration = AuthConfiguration(dataDirectory: options.dataDir)
        options.apply(to: &configuration, program: "auth-svc", defaultPort: 7001)
        configuration.databaseURL = database.url
        // validate() has read the file once already; what it refused never gets here.
        configuration.databasePassword = (try? database.password()) ?? nil
        configuration.issuer = issuer
        configuration.audience = audience
        configuration.signingKeyPath = signingKey
        configuration.smtp = smtp.flatMap(SocketAddressText.init)
        configuration.mailFrom = mailFrom
        configuration.linkBaseURL = publicURL ?? AuthConfiguration.defaultPublicURL
        if let googleClientId, let googleJwks {
            configuration.providers.append(.google(clientIDs: Self.list(googleClientId), jwks: googleJwks))
        }
        if let appleClientId, let appleJwks {
            configuration.providers.append(.apple(clientIDs: Self.list(appleClientId), jwks: appleJwks))
        }
        configuration.hashThreads = hashThreads
        configuration.scryptLogN = scryptLogN
        configuration.hashLimits.queueLimit = hashQueueLimit
        configuration.hashLimits.perAddress = hashQueuePerAddress
        configuration.hashLimits.perAccount = hashQueuePerAccount
        configuration.hashLimits.maxWait = .milliseconds(Int64(hashMaxWait * 1000))
        return configuration
    }

    /// Builds the server and serves until SIGTERM or SIGINT (``ServiceMain``).
    func run() async throws {
        let configuration = authConfiguration
        try await ServiceMain.serve("auth-svc", options: options) { logger in
            try await AuthServer.build(configuration: configuration, logger: logger)
        }
    }

    /// The public URL in effect: the flag (under either name), else `SHOP_PUBLIC_URL`, else
    /// the older `SHOP_LINK_BASE_URL`, else the default.
    static func publicURL(flag: String?, environment: [String: String]) -> String {
        flag ?? environment["SHOP_PUBLIC_URL"] ?? environment["SHOP_LINK_BASE_URL"] ?? AuthConfiguration.defaultPublicURL
    }

    /// The non-empty items of a comma-separated list.
    static func list(_ text: String) -> Set<String> {
        Set(text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
    }
}

/// The process entry: ``ServiceMain/main(_:)`` with ``AuthCommand``.
@main
enum AuthMain {
    /// Fills closed standard descriptors, then runs ``AuthCommand``.
    static func main() { ServiceMain.main(AuthCommand.self) }
}
