import Contracts
import Foundation
import Logging
import RPC
import RPCHTTP2
import ServiceTestSupport
import Synchronization
import Testing

@testable import shopctl
import JSON

/// The exit status of answers that are not RPC errors but still fail the command: the real
/// `shopctl` executable against a fake gateway (our `Router` + `HTTP2Server` on a loopback
/// port, in this process) whose answers each test picks, so no service has to run.
@Suite("shopctl's exit status when an answer arrives but the command did not succeed")
struct ExitStatusTests {
    /// The admin key the fake gateway accepts.
    private static let adminKey = "admin-key"

    /// Serves a fake gateway — Describe lists one service, Health is `health` for the whole
    /// process and SERVING for that service, ImportProducts rejects every product titled
    /// "broken" — and runs `body` with a `shopctl` runner pointed at it; stops it afterwards.
    private func withFakeGateway(health: ServingStatus, _ body: (ShopctlRunner) async throws -> Void) async throws {
        var router = Router()
        router.unary(MetaContract.describe) { _, _ in
            DescribeResponse(services: [ServiceDescription(name: CatalogContract.service, methods: [])])
        }
        router.unary(HealthContract.check) { request, _ in
            HealthCheckResponse(status: request.service.isEmpty ? health : .serving)
        }
        router.clientStreaming(CatalogContract.importProducts) { requests, context in
            guard context.metadata[MetadataKey.apiKey] == Self.adminKey else {
                throw RPCError(code: .permissionDenied, reason: "INVALID_API_KEY", message: "Wrong key.")
            }
            var response = ImportProductsResponse(created: 0, updated: 0)
            var index = 0
            for try await request in requests {
                if request.product.title == "broken" {
                    response.failed.append(ImportFailure(index: index, reason: "The title is not allowed."))
                } else {
                    response.created += 1
                }
                index += 1
            }
            return response
        }
        router.unary(BasketContract.getBasket) { _, context in
            // A revoked session: what the gateway answers a token of a signed-out session family.
            guard context.metadata[MetadataKey.authorization] == nil else {
                throw AuthReason.sessionRevoked.error("The session was revoked.")
            }
            throw AuthReason.missingToken.error("Sign in first.")
        }
        router.unary(CatalogContract.listCategories) { _, _ in
            throw GatewayReason.rateLimited.error("Too many requests; try again in 3 s.", details: .object(["retryAfterSeconds": .number(3)]))
        }
        try await serveFakeGateway(router, name: "exit-status", body)
    }

    @Test("describe of a service the gateway does not serve fails with SERVICE_NOT_FOUND and exits 4")
    func describeUnknownService() async throws {
        try await withFakeGateway(health: .serving) { shopctl in
            let unknown = try await shopctl.run(["describe", "no-such-service"])
            #expect(unknown.status == 4, "\(unknown)")
            #expect(unknown.errors.hasPrefix("error: SERVICE_NOT_FOUND: "), "\(unknown)")
            #expect(unknown.output.isEmpty, "\(unknown)")
            let known = try await shopctl.succeed(["describe", "catalog"])
            #expect(known.output.hasPrefix(CatalogContract.service), "\(known)")
        }
    }

    @Test("health exits 5 when the gateway answers NOT_SERVING, and 0 when SERVING")
    func healthNotServing() async throws {
        try await withFakeGateway(health: .notServing) { shopctl in
            let down = try await shopctl.run(["health"])
            #expect(down.status == 5, "\(down)")
            #expect(down.output == "NOT_SERVING\n", "\(down)")
            #expect(down.errors.hasPrefix("error: NOT_SERVING: "), "\(down)")
            let up = try await shopctl.succeed(["health", "--service", CatalogContract.service])
            #expect(up.output == "SERVING\n", "\(up)")
        }
    }

    @Test("admin products import exits 4 when some products failed, after printing the result")
    func importWithFailures() async throws {
        try await withFakeGateway(health: .serving) { shopctl in
            let product = #"{"title":"%@","description":"","category":"office","price":{"amount":100,"currency":"USD"},"image":"","rating":{"rate":0,"count":0},"stock":1}"#
            let lines = ["Pen", "broken", "Ink"].map { product.replacingOccurrences(of: "%@", with: $0) }
            let environment = ["SHOP_ADMIN_API_KEY": Self.adminKey]

            let partly = try await shopctl.run(
                ["admin", "products", "import", "-"], input: lines.joined(separator: "\n"), environment: environment)
            #expect(partly.status == 4, "\(partly)")
            #expect(partly.output == "Created 2, updated 0, failed 1.\n  product 2: The title is not allowed.\n", "\(partly)")
            let json = try await shopctl.run(
                ["--json", "admin", "products", "import", "-"], input: lines.joined(separator: "\n"), environment: environment)
            #expect(json.status == 4, "\(json)")
            #expect(try ShopctlJSON.decode(ImportProductsResponse.self, json.output).failed.map(\.index) == [1])

            let clean = try await shopctl.succeed(
                ["admin", "products", "import", "-"], input: [lines[0], lines[2]].joined(separator: "\n"), environment: environment)
            #expect(clean.output == "Created 2, updated 0, failed 0.\n", "\(clean)")
        }
    }

    @Test("SESSION_REVOKED removes the stored credentials of the profile in use — only those — and exits 3")
    func sessionRevokedForgetsCredentials() async throws {
        try await withFakeGateway(health: .serving) { shopctl in
            let base = shopctl.configHome.appendingPathComponent("shopctl")
            let credentials = StoredCredentials(accessToken: "a", refreshToken: "r", userId: "u-1", email: "ada@example.com")
            let standard = CredentialsStore(paths: ConfigPaths(base: base))
            let staging = CredentialsStore(paths: ConfigPaths(base: base, profile: try ProfileName(validating: "staging")))
            try standard.save(credentials)
            try staging.save(credentials)

            let revoked = try await shopctl.run(["--profile", "staging", "basket", "show"])
            #expect(revoked.status == 3, "\(revoked)")
            #expect(revoked.errors.hasPrefix("error: SESSION_REVOKED: The session was revoked. (the session was signed out elsewhere and shopctl forgot it; run `shopctl auth login`)"), "\(revoked)")
            #expect(try staging.load() == nil)
            #expect(try standard.load() == credentials)

            let json = try await shopctl.run(["--json", "basket", "show"])
            #expect(json.status == 3, "\(json)")
            #expect(try standard.load() == nil)
            let afterwards = try await shopctl.run(["basket", "show"])
            #expect(afterwards.errors.hasPrefix("error: NOT_SIGNED_IN: "), "\(afterwards)")
        }
    }

    @Test("SESSION_REVOKED keeps a newer sign-in of the same user that another shopctl saved meanwhile, and forgets the session it carried")
    func sessionRevokedKeepsNewerSignIn() async throws {
        let old = StoredCredentials(accessToken: "a-old", refreshToken: "r-old", userId: "u-1", email: "ada@example.com")
        let newer = StoredCredentials(accessToken: "a-new", refreshToken: "r-new", userId: "u-1", email: "ada@example.com")
        let slot = CredentialsSlot()
        var router = Router()
        router.unary(BasketContract.getBasket) { _, context in
            // While the old session's call is out, the same user signs out and in again elsewhere.
            if context.metadata[MetadataKey.authorization] == "Bearer a-old", let paths = slot.paths.withLock({ $0 }) {
                try CredentialsStore(paths: paths).save(newer)
            }
            throw AuthReason.sessionRevoked.error("The session was revoked.")
        }
        try await serveFakeGateway(router, name: "revoked-newer") { shopctl in
            let paths = ConfigPaths(base: shopctl.configHome.appendingPathComponent("shopctl"))
            slot.paths.withLock { $0 = paths }
            try CredentialsStore(paths: paths).save(old)

            let revoked = try await shopctl.run(["basket", "show"])
            #expect(revoked.status == 3, "\(revoked)")
            #expect(try CredentialsStore(paths: paths).load() == newer)

            let again = try await shopctl.run(["basket", "show"])
            #expect(again.status == 3, "\(again)")
            #expect(try CredentialsStore(paths: paths).load() == nil)
        }
    }

    @Test("RATE_LIMITED says how long to wait when the server says, and exits 7")
    func rateLimitedWait() async throws {
        try await withFakeGateway(health: .serving) { shopctl in
            let limited = try await shopctl.run(["categories"])
            #expect(limited.status == 7, "\(limited)")
            #expect(limited.errors == "error: RATE_LIMITED: Too many requests; try again in 3 s. (wait 3 s, then try again)\n", "\(limited)")
        }
    }
}

/// Where a fake gateway's handler finds the config directory of the shopctl under test, known
/// only once the runner exists. Thread-safe: behind a `Mutex`.
private final class CredentialsSlot: Sendable {
    /// The paths; nil until the test sets them.
    let paths = Mutex<ConfigPaths?>(nil)
}
