public import ArgumentParser
internal import Foundation
package import Logging
public import RPC

/// The flags of a service that serves signed-in users: where auth-svc is, and the issuer and
/// audience its access tokens carry (auth-svc's defaults).
public struct AuthLinkOptions: ParsableArguments, Sendable {
    @Option(help: "auth-svc address host:port, or its replicas: several host:port, comma-separated, or a name that resolves to several addresses (env SHOP_AUTH_ADDR).")
    public var authAddr: String = ProcessInfo.processInfo.environment["SHOP_AUTH_ADDR"] ?? "127.0.0.1:7001"

    @Option(help: "The iss of access tokens (env SHOP_AUTH_ISSUER).")
    public var authIssuer: String = ProcessInfo.processInfo.environment["SHOP_AUTH_ISSUER"] ?? "storefront-auth"

    @Option(help: "The aud of access tokens (env SHOP_AUTH_AUDIENCE).")
    public var authAudience: String = ProcessInfo.processInfo.environment["SHOP_AUTH_AUDIENCE"] ?? "storefront"

    public init() {}

    public mutating func validate() throws {
        guard UpstreamTarget(authAddr) != nil else { throw ValidationError("--auth-addr must be host:port, or several separated by commas.") }
    }

    /// The parsed `--auth-addr`.
    public var authTarget: UpstreamTarget {
        UpstreamTarget(authAddr) ?? UpstreamTarget(host: "127.0.0.1", port: 7001)
    }
}

/// How a service authenticates its callers through auth-svc: access tokens verified locally
/// with auth-svc's keys (`GetJwks`, cached by `kid`), and revoked sessions learned from its
/// revocation feed every 15 s — so a revoked session stops working here within API.md's 60 s.
///
/// Add ``interceptor`` to the router and run ``run()`` beside the server. Thread-safe.
package struct AuthServiceLink: Sendable {
    /// The client of auth-svc.
    package let client: RPCClient
    /// The verifier the interceptor uses.
    package let verifier: AccessTokenVerifier
    /// The revoked sessions, kept current by ``run()``.
    package let revocations: RevocationFeed

    /// A link to auth-svc through `client`, presenting `internalKey` to its revocation feed.
    package init(client: RPCClient, issuer: String, audience: String, internalKey: String, logger: Logger) {
        self.client = client
        revocations = RevocationFeed(client: client, internalKey: internalKey, logger: logger)
        verifier = AccessTokenVerifier(
            issuer: issuer, audience: audience, source: .authService(client: client), revocations: revocations)
    }

    /// A link configured by `options`, with its own client of auth-svc.
    package init(options: AuthLinkOptions, internalKey: String, logger: Logger) throws {
        self.init(
            client: try .upstream(options.authTarget, name: "auth-svc", logger: logger), issuer: options.authIssuer,
            audience: options.authAudience, internalKey: internalKey, logger: logger)
    }

    /// The interceptor that authenticates `.user` and `.optionalUser` methods.
    package var interceptor: AuthenticationInterceptor { AuthenticationInterceptor(verifier: verifier) }

    /// Polls the revocation feed until the calling task is cancelled.
    package func run() async {
        await revocations.run()
    }
}
