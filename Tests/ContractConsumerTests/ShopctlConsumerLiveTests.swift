import ContractTesting
import Contracts
import RPCHTTP2
@testable import shopctl
import Testing

/// shopctl's real commands — parsed and run as the executable does, `--json` — against the
/// gateway played from shopctl's contract. Each run is in-process with a ``ProcessContext`` of
/// its own (``InProcessShopctl``): a scratch `XDG_CONFIG_HOME`, so signed-in commands read
/// and write the test's credentials file and never the user's; passwords on standard input;
/// the output captured. The catalog commands are here; the rest in `ShopctlAuthConsumerLiveTests`,
/// `ShopctlShoppingConsumerLiveTests` and `ShopctlAdminConsumerLiveTests`.
@Suite("shopctl as a consumer")
struct ShopctlConsumerLiveTests {
    /// The interaction of `shopctl`'s contract described by `description`.
    static func interaction(_ description: String) throws -> InteractionSpec {
        try #require(try ShopctlInteractions.all().first { $0.description == description }, "no interaction \"\(description)\"")
    }

    /// The credentials of a signed-in test user: a token of the shape the gateway verifies.
    static func credentials() throws -> StoredCredentials {
        StoredCredentials(
            accessToken: try TestAuthority.accessToken(userID: ShopctlInteractions.user.id, email: ShopctlInteractions.email),
            refreshToken: ShopctlInteractions.storedRefreshToken, userId: ShopctlInteractions.user.id,
            email: ShopctlInteractions.email)
    }

    /// Runs `shopctl arguments` on a fresh shopctl — holding `credentials` first, when given —
    /// against the gateway serving `interactions`, then `check`s what it left behind.
    static func run(
        _ arguments: [String], serving interactions: [InteractionSpec], as credentials: StoredCredentials? = nil,
        input: String = "", environment: [String: String] = [:], then check: (InProcessShopctl) throws -> Void = { _ in }
    ) async throws {
        try await InProcessShopctl.with { shopctl in
            if let credentials { try shopctl.signIn(as: credentials) }
            try await MockProviders.run(consumer: "shopctl", serving: ["gateway": interactions]) { mocks in
                try await shopctl.run(arguments, gateway: mocks["gateway"], input: input, environment: environment)
            }
            try check(shopctl)
        }
    }

    @Test("each catalog command makes the call its interaction describes", arguments: [
        (["products", "show", "7"], "GetProduct for products show"),
        (["products", "list", "--category", "bags", "--page-size", "5"], "ListProducts for products list in a category"),
        (["categories"], "ListCategories for categories"),
    ])
    func catalogCommand(arguments: [String], interaction: String) async throws {
        try await Self.run(arguments, serving: [try Self.interaction(interaction)]) { shopctl in
            #expect(shopctl.lines.count == 1, "\(shopctl.lines)")
        }
    }

    @Test("a signed-in command is refused before any call when the test's config directory holds no credentials")
    func notSignedIn() async throws {
        try await InProcessShopctl.with { shopctl in
            try await MockProviders.run(consumer: "shopctl", serving: ["gateway": []]) { mocks in
                await #expect(throws: ShopctlError.notSignedIn) {
                    try await shopctl.run(["auth", "whoami"], gateway: mocks["gateway"])
                }
            }
        }
    }
}
