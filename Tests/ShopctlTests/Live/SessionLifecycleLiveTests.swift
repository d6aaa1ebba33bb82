import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing

@testable import shopctl

/// The stored session over time, with the real gateway and auth-svc: an expired access token is
/// refreshed without the user noticing — once, even by two processes at the same moment — and a
/// refused refresh token ends the session cleanly. Plus the admin commands.
@Suite("shopctl live: sessions that expire, and catalog administration", .serialized)
struct SessionLifecycleLiveTests {
    /// How many `RefreshSession` calls auth-svc has logged.
    private func refreshCalls(_ stack: ShopctlStack) -> Int {
        stack.logLines(of: .auth).filter { $0.contains("method=/shop.auth.v1.AuthService/RefreshSession") }.count
    }

    @Test("expired tokens are refreshed once across processes; a refused refresh token ends the session")
    func expiry() async throws {
        try await withShopctlStack { stack in
            let shopctl = try stack.shopctl()
            try await shopctl.waitUntilServing()
            let email = LiveFixtures.newEmail()
            try await shopctl.signUpAndSignIn(email, password: LiveFixtures.password, mailbox: stack.mailbox)
            let store = CredentialsStore(paths: shopctl.paths)
            let original = try #require(try store.load())

            // An expired access token: the call is refreshed and retried, the user sees only the answer.
            var stale = original
            stale.accessToken = try ExpiredAccessToken.forged(from: original.accessToken, signedWith: stack.signingKey)
            try store.save(stale)
            let before = refreshCalls(stack)
            let whoami = try await shopctl.succeed(["auth", "whoami"])
            #expect(whoami.output.contains(email))
            let renewed = try #require(try store.load())
            #expect(renewed.accessToken != stale.accessToken)
            #expect(renewed.refreshToken != original.refreshToken)
            #expect(await eventually { refreshCalls(stack) == before + 1 })

            // Two processes hit the expired token at once: one refreshes, the other waits and
            // uses the new tokens. Had both refreshed, the rotated token's reuse would have
            // revoked the session and the third call would fail.
            var staleAgain = renewed
            staleAgain.accessToken = try ExpiredAccessToken.forged(from: renewed.accessToken, signedWith: stack.signingKey)
            try store.save(staleAgain)
            let beforePair = refreshCalls(stack)
            async let first = shopctl.run(["basket", "show"])
            async let second = shopctl.run(["favorites", "list"])
            let (one, two) = try await (first, second)
            #expect(one.status == 0, "\(one)")
            #expect(two.status == 0, "\(two)")
            try await shopctl.succeed(["auth", "whoami"])
            #expect(await eventually { refreshCalls(stack) == beforePair + 1 })
            #expect(refreshCalls(stack) == beforePair + 1)

            // A refresh token the server refuses: the credentials are deleted, the user told.
            var dead = try #require(try store.load())
            dead.accessToken = try ExpiredAccessToken.forged(from: dead.accessToken, signedWith: stack.signingKey)
            dead.refreshToken = "not-a-refresh-token"
            try store.save(dead)
            let ended = try await shopctl.run(["basket", "show"])
            #expect(ended.status == 3, "\(ended)")
            #expect(ended.errors == "error: SESSION_ENDED: Your session has ended. (run `shopctl auth login`)\n")
            #expect(!FileManager.default.fileExists(atPath: shopctl.paths.credentials.path))
        }
    }

    @Test("admin commands create, import and delete products with the admin key")
    func admin() async throws {
        try await withShopctlStack { stack in
            let shopctl = try stack.shopctl()
            try await shopctl.waitUntilServing()
            let key = ["SHOP_ADMIN_API_KEY": stack.adminKey]

            let created = try ShopctlJSON.decode(
                ProductResponse.self,
                try await shopctl.succeed(
                    ["--json", "admin", "products", "upsert", "--title", "Walnut desk organiser", "--category", "office",
                        "--price", "24.50", "--stock", "7"], environment: key
                ).output)
            #expect(created.product.id > 0)
            #expect(created.product.price == Money(amount: 2450, currency: "USD"))
            let changed = try ShopctlJSON.decode(
                ProductResponse.self,
                try await shopctl.succeed(
                    ["--json", "admin", "products", "upsert", "--id", String(created.product.id), "--price", "19.99"],
                    environment: key
                ).output)
            #expect(changed.product.title == "Walnut desk organiser")
            #expect(changed.product.price.amount == 1999)

            let file = shopctl.configHome.deletingLastPathComponent().appendingPathComponent("import.jsonl")
            let lines = [
                #"{"title":"Linen notebook","description":"A5, dotted","category":"office","price":{"amount":1200,"currency":"USD"},"image":"","rating":{"rate":4.5,"count":2},"stock":30}"#,
                "",
                #"{"product":{"title":"Brass pen","description":"","category":"office","price":{"amount":3500,"currency":"USD"},"image":"","rating":{"rate":0,"count":0},"stock":5}}"#,
            ]
            try Data(lines.joined(separator: "\n").utf8).write(to: file)
            let imported = try await shopctl.succeed(["admin", "products", "import", file.path], environment: key)
            #expect(imported.output == "Created 2, updated 0, failed 0.\n")
            let office = try ShopctlJSON.decode(
                ListProductsResponse.self, try await shopctl.succeed(["--json", "products", "list", "--category", "office"]).output)
            #expect(Set(office.products.map(\.title)) == ["Walnut desk organiser", "Linen notebook", "Brass pen"])

            try await shopctl.succeed(["admin", "products", "delete", String(created.product.id)], environment: key)
            let gone = try await shopctl.run(["products", "show", String(created.product.id)])
            #expect(gone.status == 4)

            let wrongKey = try await shopctl.run(
                ["admin", "products", "delete", "1"], environment: ["SHOP_ADMIN_API_KEY": "wrong"])
            #expect(wrongKey.status == 6, "\(wrongKey)")
            #expect(wrongKey.errors.hasPrefix("error: INVALID_API_KEY: "))
            let noKey = try await shopctl.run(["admin", "products", "delete", "1"])
            #expect(noKey.status == 2)
            #expect(noKey.errors.contains("SHOP_ADMIN_API_KEY"))
        }
    }
}

