// The target's files build only in debug builds: they `@testable import` the services'
// executables, which only debug builds compile for testing, and `swift build -c release`
// compiles every target that is not a test.
#if DEBUG
import Foundation
import Logging
import ServiceKit
package import ServiceTestSupport

/// How the services of an in-process stack are configured, where a suite needs other than what
/// the processes of ``withServiceStack`` get by default.
package struct InProcessOptions: Sendable {
    /// Whether catalog-svc loads its seed catalog on its first start (`--no-seed` when false).
    package var seedCatalog = true
    /// auth-svc's settings beyond the defaults.
    package var auth = InProcessAuthOptions()
    /// The gateway's settings beyond the defaults.
    package var gateway = InProcessGatewayOptions()

    /// The defaults: as the live harness starts each service.
    package init(
        seedCatalog: Bool = true, auth: InProcessAuthOptions = InProcessAuthOptions(),
        gateway: InProcessGatewayOptions = InProcessGatewayOptions()
    ) {
        self.seedCatalog = seedCatalog
        self.auth = auth
        self.gateway = gateway
    }
}

/// The gateway's settings an in-process stack can change, each as the flag of the same
/// meaning; nil keeps the gateway's default.
package struct InProcessGatewayOptions: Sendable {
    /// `--rate-limit`: requests a second per client (0: no limit).
    package var rateLimit: Double?
    /// `--rate-burst`: the burst allowed above the rate.
    package var rateBurst: Int?
    /// `--max-watches-per-user`: streams of one watch method one user may hold open at once.
    package var maxWatchesPerUser: Int?

    /// The gateway's defaults, but for what is given.
    package init(rateLimit: Double? = nil, rateBurst: Int? = nil, maxWatchesPerUser: Int? = nil) {
        self.rateLimit = rateLimit
        self.rateBurst = rateBurst
        self.maxWatchesPerUser = maxWatchesPerUser
    }
}

/// auth-svc's settings an in-process stack can change, each as the flag of the same meaning.
package struct InProcessAuthOptions: Sendable {
    /// `--signing-key`: the signing key file; nil makes one in the data directory.
    package var signingKeyPath: String?
    /// `--public-url`: the base of the links in emails; nil keeps the default.
    package var linkBaseURL: String?
    /// `--google-client-id` and `--google-jwks`: Google sign-in, when set.
    package var google: IdentityProviderOption?
    /// `--apple-client-id` and `--apple-jwks`: Apple sign-in, when set.
    package var apple: IdentityProviderOption?

    /// auth-svc's defaults.
    package init(
        signingKeyPath: String? = nil, linkBaseURL: String? = nil, google: IdentityProviderOption? = nil,
        apple: IdentityProviderOption? = nil
    ) {
        self.signingKeyPath = signingKeyPath
        self.linkBaseURL = linkBaseURL
        self.google = google
        self.apple = apple
    }
}

/// A sign-in provider's client ids and its JWK Set (a file path or URL).
package struct IdentityProviderOption: Sendable {
    /// The accepted `aud` values.
    package var clientIDs: Set<String>
    /// The provider's JWK Set.
    package var jwks: String

    /// `clientIDs` and `jwks`.
    package init(clientIDs: Set<String>, jwks: String) {
        self.clientIDs = clientIDs
        self.jwks = jwks
    }
}

/// Runs `body` against a fresh stack of `members` (in start order) built in this process
/// (``withInProcessServiceStack(_:build:_:)``): each service made by its `<Name>Server.make`
/// with the settings ``withServiceStack`` gives its process, the clients between them and the
/// test's own calling routers through an `InProcessTransport`.
@discardableResult
package func withInProcessStack<Result>(
    _ members: [ServiceName], options: InProcessOptions = InProcessOptions(),
    _ body: (ServiceStack) async throws -> Result
) async throws -> Result {
    // The services read their keys and settings from the environment before their files and
    // defaults; a process started by the live harness gets none of the shell's, but in this
    // process they would override the stack's.
    let inherited = ProcessInfo.processInfo.environment.keys.filter { $0.hasPrefix("SHOP_") }
    guard inherited.isEmpty else { throw InProcessStackError.environmentSet(inherited.sorted()) }
    return try await withInProcessServiceStack(members, build: { name, stack in
        try await InProcessCores.make(name, in: stack, options: options)
    }, body)
}

/// The cores of an in-process stack: each service's `make`, wired to the members before it.
enum InProcessCores {
    /// The `iss` and `aud` of access tokens: auth-svc's defaults, which every service's flags
    /// also default to.
    static let issuer = "storefront-auth", audience = "storefront"

    /// The logger services get: quiet, as the tests read answers, not log lines.
    static let logger = Logger(label: "in-process-service") { _ in SwiftLogNoOpLogHandler() }

    /// Sets up swift-log for the test process once, before the first service is built: the
    /// loggers a service makes for its parts (`auth-svc.mail`, `catalog-svc.auth`…) take the
    /// process's handler, which would otherwise write every info line of every in-process
    /// service into the test output. Errors still show.
    static let quietLogging: Void = LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = .error
        return handler
    }

    /// Makes `name`'s core over `stack`'s data directory and new clients of the members it
    /// calls (each service closes its own).
    static func make(_ name: ServiceName, in stack: ServiceStack, options: InProcessOptions) async throws -> any ServiceCore {
        quietLogging
        let directory = stack.dataDirectory(name).path
        let databaseURL = try await stack.databaseURL()
        switch name {
        case .auth: return try await auth(dataDirectory: directory, databaseURL: databaseURL, options: options.auth)
        case .catalog:
            return try await catalog(
                dataDirectory: directory, databaseURL: databaseURL, auth: stack.newClient(.auth), seed: options.seedCatalog)
        case .basket:
            return try await basket(
                dataDirectory: directory, databaseURL: databaseURL, auth: stack.newClient(.auth),
                catalog: stack.newClient(.catalog))
        case .order:
            return try await order(
                dataDirectory: directory, databaseURL: databaseURL, auth: stack.newClient(.auth),
                catalog: stack.newClient(.catalog), basket: stack.newClient(.basket))
        case .gateway:
            return try gateway(in: stack, options: options.gateway)
        }
    }

    /// How the services reach auth-svc: issuer and audience (the address is unused; the
    /// client is given).
    static var authLink: AuthLinkOptions {
        // Every @Option must be assigned: read unparsed, swift-argument-parser traps.
        var options = AuthLinkOptions()
        options.authAddr = "127.0.0.1:7001"
        options.authIssuer = issuer
        options.authAudience = audience
        return options
    }
}

/// Why an in-process stack could not be built.
enum InProcessStackError: Error {
    /// The named member has no core built in this process to reach.
    case notBuiltInProcess(String)
    /// `SHOP_*` variables are set in the test process, which the services would read.
    case environmentSet([String])
    /// The named member keeps no metrics registry this stack can read.
    case noMetrics(String)
}
#endif
