import Credentials
import Foundation
import ServiceTestSupport
import Testing

/// Runs `body` against auth-, catalog-, basket-, order-svc and the gateway, started as real
/// processes by ``withServiceStack``, and a `shopctl` runner pointed at the gateway with its
/// own config home.
func withShopctlStack(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: (ShopctlStack) async throws -> Void
) async throws {
    try await withServiceStack(ServiceName.allCases, sourceLocation: sourceLocation) { services in
        try await body(try ShopctlStack(services: services))
    }
}

/// A running stack as the shopctl tests use it: the services, their admin key, auth-svc's
/// mailbox and signing key (so tests can mint access tokens the gateway accepts, e.g.
/// expired ones), and `shopctl` runners against the gateway. Immutable; `Sendable`.
struct ShopctlStack: Sendable {
    /// The processes.
    let services: ServiceStack
    /// The key auth-svc signs access tokens with, read from its data directory.
    let signingKey: SigningKey

    /// Wraps the running `services`.
    init(services: ServiceStack) throws {
        self.services = services
        signingKey = try services.signingKey()
    }

    /// `SHOP_ADMIN_API_KEY` of catalog-svc and the gateway.
    var adminKey: String { services.adminKey }

    /// Where auth-svc delivers its emails.
    var mailbox: AuthMailbox { AuthMailbox(authDataDirectory: services.dataDirectory(.auth)) }

    /// A `shopctl` runner against this stack's gateway, with config home `name` under the root.
    func shopctl(configHome name: String = "config") throws -> ShopctlRunner {
        ShopctlRunner(configHome: services.root.appendingPathComponent(name), gateway: try services.address(of: .gateway))
    }

    /// The standard error lines `name` has written so far.
    func logLines(of name: ServiceName) -> [String] { (try? services.service(name).log.lines) ?? [] }
}
