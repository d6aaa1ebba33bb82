import Contracts
import Foundation
import ServiceTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The whole system as an operator and a shopper meet it (issue 6, DESIGN.md "Testing"):
/// `deploy/compose up` starts the five services from this build's executables, every action is
/// a real `shopctl` process talking to compose's gateway, and `down` must leave nothing behind.
/// Real processes and sockets only; nothing is started or called in-process.
@Suite("End to end: deploy/compose runs the system, shopctl walks a shopper's journey", .serialized)
struct EndToEndLiveTests {
    @Test("sign up, browse, favorite, fill a watched basket, pay, refresh an expired token, survive basket-svc's crash, down")
    func journey() async throws {
        try await withComposeSystem { system in
            try await Self.walk(system)
        }
    }

    /// Every step, in the order a person would take them, on one running system.
    private static func walk(_ system: ComposeSystem) async throws {
        let up = try await system.run("up")
        try #require(up.status == 0, "up failed: \(up)")
        let listening = SystemProcesses.listeningPorts()
        let silent = system.ports.filter { !listening.contains($0.value) }.keys.sorted()
        // A service's own log says why it does not listen (it stopped, or was restarted).
        #expect(silent.isEmpty, "up returned before every port listened: \(system.ports); \(silent.map { "\($0):\n\(system.log(of: $0).suffix(3_000))" })")

        let gateway = "127.0.0.1:\(try #require(system.ports["gateway"]))"
        let shopctl = ShopctlRunner(
            configHome: system.scratch.appendingPathComponent("shopper-config"), gateway: gateway, passing: .flag)
        try await shopctl.waitUntilServing()

        let catalog = try await seedCatalog(system, shopctl)
        let email = "e2e-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        try await shopctl.signUpAndSignIn(
            email, password: password, mailbox: AuthMailbox(authDataDirectory: system.data.appendingPathComponent("auth-svc")))
        let whoami = try await shopctl.succeed(["auth", "whoami"])
        #expect(whoami.output.contains("\(email) (verified)"), "\(whoami)")

        try await browse(shopctl, catalog)
        let filled = try await fillBasketWhileWatching(shopctl, catalog)
        try await pay(shopctl, basket: filled)
        let kept = try await refreshExpiredToken(system, shopctl, catalog)
        try await surviveBasketCrash(system, shopctl, basket: kept)
        try await downLeavesNothing(system)
    }

    // MARK: Steps

    /// The products the operator adds: three imported from a JSON-lines file, one upserted
    /// from flags, all with the admin key compose generated.
    private struct Catalog {
        let backpack: Product
        let poles: Product
        let kettle: Product
        let beanie: Product
    }

    /// Seeds the catalog through the gateway as an operator would, with `admin products import`
    /// and `upsert` and the admin key from compose's data directory; a wrong key is refused.
    private static func seedCatalog(_ system: ComposeSystem, _ shopctl: ShopctlRunner) async throws -> Catalog {
        let adminKey = try String(contentsOf: system.data.appendingPathComponent("admin-api-key"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(!adminKey.isEmpty, "compose generated no admin key")
        let key = ["SHOP_ADMIN_API_KEY": adminKey]

        let file = system.scratch.appendingPathComponent("catalog.jsonl")
        let lines = [
            #"{"title":"Kestrel hiking backpack","description":"40 litres, with a rain cover","category":"outdoors","price":{"amount":8900,"currency":"USD"},"image":"","rating":{"rate":4.6,"count":12},"stock":40}"#,
            #"{"title":"Carbon trekking poles","description":"A foldable pair","category":"outdoors","price":{"amount":4550,"currency":"USD"},"image":"","rating":{"rate":4.2,"count":8},"stock":40}"#,
            #"{"title":"Ceramic pour-over kettle","description":"One litre, gooseneck spout","category":"kitchen","price":{"amount":3999,"currency":"USD"},"image":"","rating":{"rate":4.8,"count":30},"stock":40}"#,
        ]
        try Data(lines.joined(separator: "\n").utf8).write(to: file)
        let imported = try await shopctl.succeed(["admin", "products", "import", file.path], environment: key)
        #expect(imported.output == "Created 3, updated 0, failed 0.\n", "\(imported)")
        let upserted = try await shopctl.succeed(
            ["--json", "admin", "products", "upsert", "--title", "Merino wool beanie", "--category", "apparel",
                "--price", "24.00", "--stock", "40"], environment: key)
        let beanie = try ShopctlJSON.decode(ProductResponse.self, upserted.output).product
        #expect(beanie.id > 0 && beanie.price == Money(amount: 2400, currency: "USD"), "\(beanie)")

        // Without the key the gateway refuses the operator's command.
        let refused = try await shopctl.run(["admin", "products", "delete", String(beanie.id)], environment: ["SHOP_ADMIN_API_KEY": "wrong"])
        #expect(refused.status == 6 && refused.errors.hasPrefix("error: INVALID_API_KEY: "), "\(refused)")

        // Beside catalog-svc's own seed catalog (24 products).
        let listed = try ShopctlJSON.decode(
            ListProductsResponse.self, try await shopctl.succeed(["--json", "products", "list", "--page-size", "100"]).output)
        #expect(listed.totalSize == listed.products.count && listed.products.count >= 4, "\(listed)")
        func product(_ title: String) throws -> Product {
            try #require(listed.products.first { $0.title == title }, "\(title) is not listed: \(listed.products.map(\.title))")
        }
        return Catalog(
            backpack: try product("Kestrel hiking backpack"), poles: try product("Carbon trekking poles"),
            kettle: try product("Ceramic pour-over kettle"), beanie: try product("Merino wool beanie"))
    }

    /// The catalog as a table, one product in detail, a search, and a favorite.
    private static func browse(_ shopctl: ShopctlRunner, _ catalog: Catalog) async throws {
        let table = try await shopctl.succeed(["products", "list", "--category", "outdoors"])
        #expect(table.lines.first?.hasPrefix("ID  TITLE") == true, "\(table)")
        #expect(table.output.contains("2 of 2 products."), "\(table)")
        for product in [catalog.backpack, catalog.poles] {
            #expect(table.output.contains(product.title), "\(product.title) not in \(table)")
        }

        let shown = try await shopctl.succeed(["products", "show", String(catalog.kettle.id)])
        #expect(shown.output.hasPrefix("#\(catalog.kettle.id) Ceramic pour-over kettle"), "\(shown)")
        #expect(shown.output.contains("$39.99"), "\(shown)")

        let found = try ShopctlJSON.decode(
            ListProductsResponse.self, try await shopctl.succeed(["--json", "products", "list", "--search", "kestrel"]).output)
        #expect(found.products.map(\.id) == [catalog.backpack.id], "searching kestrel: \(found.products.map(\.title))")
        let searchTable = try await shopctl.succeed(["products", "list", "--search", "trekking"])
        #expect(searchTable.output.contains("Carbon trekking poles") && !searchTable.output.contains("Kestrel"), "\(searchTable)")

        try await shopctl.succeed(["favorites", "add", String(catalog.kettle.id)])
        let favorites = try ShopctlJSON.decode(
            ListFavoritesResponse.self, try await shopctl.succeed(["--json", "favorites", "list"]).output)
        #expect(favorites.products.map(\.id) == [catalog.kettle.id], "\(favorites)")
    }

    /// Two products added and a count changed while `basket watch` runs in a second process
    /// with the same config home: the watch prints each of the three baskets the commands got.
    private static func fillBasketWhileWatching(_ shopctl: ShopctlRunner, _ catalog: Catalog) async throws -> Basket {
        let watch = try shopctl.start(["--json", "basket", "watch"])
        do {
            let initial = await watch.output.first(within: .seconds(30)) { try? ShopctlJSON.decode(Basket.self, $0) }
            #expect(initial?.items.isEmpty == true, "the watch printed no empty basket first: \(watch.errors.tail())")

            let first = try ShopctlJSON.decode(
                Basket.self, try await shopctl.succeed(["--json", "basket", "add", String(catalog.backpack.id)]).output)
            try await expectWatch(watch, prints: first)
            let second = try ShopctlJSON.decode(
                Basket.self,
                try await shopctl.succeed(["--json", "basket", "add", String(catalog.poles.id), "--count", "2"]).output)
            #expect(second.items.map(\.productId) == [catalog.backpack.id, catalog.poles.id], "\(second)")
            try await expectWatch(watch, prints: second)
            let line = try #require(second.items.first { $0.productId == catalog.backpack.id })
            let third = try ShopctlJSON.decode(
                Basket.self, try await shopctl.succeed(["--json", "basket", "set", String(line.id.prefix(8)), "3"]).output)
            #expect(third.items.map(\.count) == [3, 2] && third.itemCount == 5, "\(third)")
            #expect(third.total == Money(amount: 3 * 8900 + 2 * 4550, currency: "USD"), "\(third)")
            try await expectWatch(watch, prints: third)

            let versions = try ShopctlJSON.decodeLines(Basket.self, watch.output.lines).map(\.version)
            #expect(versions == versions.sorted() && Set(versions).count == versions.count, "watch versions: \(versions)")
            #expect(await watch.stop(with: SIGINT) == 0, "watch errors: \(watch.errors.tail())")
            return third
        } catch {
            _ = await watch.stop(with: SIGKILL)
            throw error
        }
    }

    /// Waits for the watch to print `basket` (the same version, lines and total).
    private static func expectWatch(
        _ watch: RunningShopctl, prints basket: Basket, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let seen = await watch.output.first(within: .seconds(20)) { line -> Basket? in
            guard let update = try? ShopctlJSON.decode(Basket.self, line), update.version == basket.version else { return nil }
            return update
        }
        #expect(seen?.items == basket.items, "the watch did not print version \(basket.version): \(watch.output.lines)", sourceLocation: sourceLocation)
        #expect(seen?.total == basket.total && seen?.itemCount == basket.itemCount, sourceLocation: sourceLocation)
    }

    /// A declined card is refused with its reason and exit 4, the basket kept; a good card pays
    /// for exactly the basket, the order is listed and the basket is empty.
    private static func pay(_ shopctl: ShopctlRunner, basket: Basket) async throws {
        // API.md §6 and order-svc's TestPaymentProcessor: 4000000000000002 is declined.
        let declined = try await shopctl.run(["order", "place"] + address + card("4000000000000002"))
        #expect(declined.status == 4, "\(declined)")
        #expect(declined.errors.hasPrefix("error: PAYMENT_DECLINED: The card was declined."), "\(declined)")
        #expect(declined.errors.contains("try another card"), "\(declined)")
        #expect(declined.output.isEmpty, "\(declined)")
        let kept = try ShopctlJSON.decode(Basket.self, try await shopctl.succeed(["--json", "basket", "show"]).output)
        #expect(kept.items == basket.items && kept.version == basket.version, "the declined order changed the basket: \(kept)")

        let placed = try ShopctlJSON.decode(
            Order.self, try await shopctl.succeed(["--json", "order", "place"] + address + card("4242424242424242")).output)
        #expect(placed.status == .paid, "\(placed)")
        #expect(placed.total == basket.total, "\(placed)")
        #expect(placed.items.map(\.count) == basket.items.map(\.count), "\(placed)")
        #expect(placed.payment?.last4 == "4242", "\(placed)")
        #expect(placed.shippingAddress.country == "US" && placed.shippingAddress.city == "Arlington", "\(placed)")

        let table = try await shopctl.succeed(["order", "list"])
        #expect(table.output.contains(placed.id), "\(table)")
        let orders = try ShopctlJSON.decode(ListOrdersResponse.self, try await shopctl.succeed(["--json", "order", "list"]).output)
        #expect(orders.orders.first?.id == placed.id, "\(orders)")
        #expect(orders.orders.map(\.status) == [.paid, .paymentFailed], "\(orders)")
        let empty = try await shopctl.succeed(["basket", "show"])
        #expect(empty.output == "Your basket is empty.\n", "\(empty)")
    }

    /// An access token that expired, signed with the key compose's auth-svc keeps in its data
    /// directory, is written into the credentials file: the next command succeeds as if
    /// nothing happened, and the stored tokens have been renewed. Returns the basket it made.
    private static func refreshExpiredToken(
        _ system: ComposeSystem, _ shopctl: ShopctlRunner, _ catalog: Catalog
    ) async throws -> Basket {
        let key = try ExpiredAccessToken.signingKey(ofAuthDataDirectory: system.data.appendingPathComponent("auth-svc"))
        let stored = try storedTokens(shopctl)
        let expired = try ExpiredAccessToken.forged(from: stored.access, signedWith: key)
        try replaceAccessToken(in: shopctl, with: expired)
        let refreshCalls = { refreshSessionCalls(system) }
        let callsBefore = refreshCalls()

        let added = try await shopctl.succeed(["--json", "basket", "add", String(catalog.kettle.id)])
        let basket = try ShopctlJSON.decode(Basket.self, added.output)
        #expect(basket.items.map(\.productId) == [catalog.kettle.id], "\(basket)")
        let renewed = try storedTokens(shopctl)
        // Not compared with the first access token: one issued for the same session within the
        // same second carries the same claims, and Ed25519 signatures are deterministic.
        #expect(renewed.access != expired, "the expired access token was not replaced")
        #expect(renewed.refresh != stored.refresh, "the refresh token did not rotate")
        #expect(
            await eventually(within: .seconds(10)) { refreshCalls() == callsBefore + 1 },
            "auth-svc did not log exactly one RefreshSession: \(callsBefore) → \(refreshCalls())")
        let whoami = try await shopctl.succeed(["auth", "whoami"])
        #expect(!whoami.output.isEmpty)
        return basket
    }

    /// basket-svc is killed: `basket show` right after answers UNAVAILABLE in under a second
    /// with exit 5; compose's supervisor starts a new basket-svc, and the basket is still there.
    private static func surviveBasketCrash(_ system: ComposeSystem, _ shopctl: ShopctlRunner, basket: Basket) async throws {
        let before = try system.row("basket-svc", in: try await system.status())
        #expect(before.status == "serving" && before.restarts == 0, "\(before)")
        let killed = try #require(before.pid, "basket-svc has no pid: \(before)")
        #expect(kill(pid_t(killed), SIGKILL) == 0)
        let gone = await eventually(within: .seconds(10)) { !SystemProcesses.isAlive(killed) }
        try #require(gone, "basket-svc \(killed) survived SIGKILL")

        let unavailable = try await shopctl.run(["basket", "show"])
        #expect(unavailable.status == 5, "\(unavailable)")
        #expect(unavailable.errors.hasPrefix("error: UPSTREAM_UNAVAILABLE: basket-svc is unavailable"), "\(unavailable)")
        #expect(unavailable.output.isEmpty, "\(unavailable)")
        // The gateway's own retries and breaker take a few hundred milliseconds at most; a client
        // that retried on top (as shopctl once did) took 1–1.5 s, or reached the restarted service.
        #expect(unavailable.duration < .seconds(1), "UNAVAILABLE took \(unavailable.duration)")

        var after = before
        let back = try await eventually(within: .seconds(60), every: .milliseconds(200)) {
            after = try system.row("basket-svc", in: try await system.status())
            return after.status == "serving" && after.pid != nil && after.pid != killed
        }
        #expect(back, "compose did not bring basket-svc back: \(after)")
        #expect(after.restarts == 1 && after.supervisorPid == before.supervisorPid, "\(before) → \(after)")
        let log = system.log(of: "basket-svc")
        #expect(log.contains("compose: basket-svc killed by signal KILL; restart 1 in 1s"), "the restart is not logged:\n\(log)")

        // The gateway notices within its health round (a second); poll, then compare.
        var shown: ShopctlResult?
        let answered = try await eventually(within: .seconds(30), every: .milliseconds(200)) {
            shown = try await shopctl.run(["--json", "basket", "show"])
            return shown?.status == 0
        }
        #expect(answered, "basket show never worked again: \(shown.map(String.init(describing:)) ?? "")")
        if answered, let shown {
            let again = try ShopctlJSON.decode(Basket.self, shown.output)
            #expect(again.items == basket.items && again.version == basket.version, "the basket changed across the crash: \(again)")
        }
    }

    /// `down` stops every supervisor and service: none of their pids lives on, no process
    /// names the scratch directory, nothing listens on the system's ports, status shows all stopped.
    private static func downLeavesNothing(_ system: ComposeSystem) async throws {
        let rows = try await system.status()
        #expect(rows.map(\.name) == system.services && rows.allSatisfy { $0.status == "serving" }, "\(rows)")
        let pids = rows.flatMap { [$0.pid, $0.supervisorPid] }.compactMap { $0 }
        #expect(pids.count == 2 * system.services.count, "\(rows)")

        let down = try await system.run("down")
        #expect(down.status == 0, "down failed: \(down)")
        for name in system.services { #expect(down.output.contains("stopped \(name)"), "down: \(down.output)") }
        for pid in pids { #expect(!SystemProcesses.isAlive(pid), "process \(pid) is still there after down") }
        let left = try await system.processesLeft()
        #expect(left.isEmpty, "processes left after down: \(left)")
        let listening = SystemProcesses.listeningPorts().intersection(system.ports.values)
        #expect(listening.isEmpty, "something still listens on \(listening.sorted()) after down")
        let stopped = try await system.status()
        #expect(stopped.allSatisfy { $0.status == "stopped" && $0.pid == nil && $0.supervisorPid == nil }, "\(stopped)")
    }

    // MARK: Fixtures

    /// The shopper's password (long, uncommon, not an email): typed on standard input.
    private static let password = "quartz-lantern-meadow-91"

    /// The address flags of `order place`.
    private static let address = [
        "--name", "Grace Hopper", "--line1", "1 Compiler Way", "--city", "Arlington", "--postal-code", "22201",
        "--country", "US",
    ]

    /// The card flags for `number`, expiring 12/30.
    private static func card(_ number: String) -> [String] { ["--card", number, "--exp", "12/30", "--cvc", "123"] }

    /// The access and refresh token in shopctl's credentials file.
    private static func storedTokens(_ shopctl: ShopctlRunner) throws -> (access: String, refresh: String) {
        let object = try credentials(shopctl)
        let access = try #require(object["accessToken"] as? String, "no accessToken in \(shopctl.credentialsFile.path)")
        let refresh = try #require(object["refreshToken"] as? String, "no refreshToken in \(shopctl.credentialsFile.path)")
        return (access, refresh)
    }

    /// shopctl's credentials file as a JSON object.
    private static func credentials(_ shopctl: ShopctlRunner) throws -> [String: Any] {
        let data = try Data(contentsOf: shopctl.credentialsFile)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "credentials are not a JSON object")
    }

    /// Rewrites the credentials file with `accessToken` in place of the stored one, every other
    /// member kept, mode 0600 as shopctl keeps it.
    private static func replaceAccessToken(in shopctl: ShopctlRunner, with accessToken: String) throws {
        var object = try credentials(shopctl)
        object["accessToken"] = accessToken
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        try data.write(to: shopctl.credentialsFile, options: .atomic)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: shopctl.credentialsFile.path)
    }

    /// How many `RefreshSession` calls compose's auth-svc has logged.
    private static func refreshSessionCalls(_ system: ComposeSystem) -> Int {
        system.log(of: "auth-svc").split(separator: "\n")
            .filter { $0.contains("method=/shop.auth.v1.AuthService/RefreshSession") }.count
    }
}
