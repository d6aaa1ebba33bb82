import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import shopctl

/// The real `shopctl basket watch` and `auth watch` against the real stack while basket-svc
/// and then the gateway restart: both watches carry on, say `reconnecting…` once per outage on
/// standard error only, print what changed and nothing twice, and end when the session ends.
@Suite("shopctl live: watches resume after basket-svc and the gateway restart", .serialized)
struct WatchResumeLiveTests {
    /// The baskets `watch` printed (one JSON document per line).
    private func baskets(_ watch: RunningShopctl) throws -> [Basket] {
        try ShopctlJSON.decodeLines(Basket.self, watch.output.lines)
    }

    /// Waits until `watch` prints a basket of `lines` lines; whether it did.
    private func printsBasket(_ watch: RunningShopctl, lines: Int) async -> Bool {
        await watch.output.first(within: .seconds(30)) { line in
            (try? JSONCodec.shared.decode(Basket.self, from: Data(line.utf8))).flatMap { $0.items.count == lines ? true : nil }
        } ?? false
    }

    /// How many times `watch` said `reconnecting…`.
    private func reconnects(_ watch: RunningShopctl) -> Int {
        watch.errors.lines.filter { $0 == WatchResume.reconnectingNotice }.count
    }

    /// Adds `product` to the basket, trying again while the restarted stack settles.
    private func add(_ product: Int, with shopctl: ShopctlRunner) async throws {
        var last: ShopctlResult?
        let added = try await eventually(within: .seconds(30), every: .milliseconds(250)) {
            last = try await shopctl.run(["basket", "add", String(product)])
            return last?.status == 0
        }
        #expect(added, "\(last.map(String.init(describing:)) ?? "")")
    }

    /// Waits up to `limit` for `watch` to exit by itself; its status, nil when it did not.
    private func exitStatus(of watch: RunningShopctl, within limit: Duration) async -> Int32? {
        guard await eventually(within: limit, every: .milliseconds(100), { !watch.isRunning }) else { return nil }
        return await watch.stop(with: SIGTERM)
    }

    /// Kills whichever of `watches` still runs (after a failure; the others have exited).
    private func kill(_ watches: RunningShopctl...) async {
        for watch in watches { _ = await watch.stop(with: SIGKILL, within: .seconds(1)) }
    }

    @Test("basket watch and auth watch survive a basket-svc restart and a gateway restart, and end when signed out")
    func resumeAcrossRestarts() async throws {
        try await withShopctlStack { stack in
            let shopctl = try stack.shopctl()
            try await shopctl.waitUntilServing()
            try await shopctl.signUpAndSignIn(LiveFixtures.newEmail(), password: LiveFixtures.password, mailbox: stack.mailbox)
            let products = try ShopctlJSON.decode(
                ListProductsResponse.self, try await shopctl.succeed(["--json", "products", "list", "--page-size", "2"]).output
            ).products.map(\.id)
            try #require(products.count == 2)

            let basketWatch = try shopctl.start(["--json", "basket", "watch"])
            let authWatch = try shopctl.start(["--json", "auth", "watch"])
            do {
                try await restartAndSignOut(stack, shopctl, basketWatch: basketWatch, authWatch: authWatch, products: products)
            } catch {
                await kill(basketWatch, authWatch)
                throw error
            }
            await kill(basketWatch, authWatch)
        }
    }

    /// With both watches running: restarts basket-svc, then the gateway, changing the basket
    /// after each, then signs out, checking what the watches print and how they end.
    private func restartAndSignOut(
        _ stack: ShopctlStack, _ shopctl: ShopctlRunner, basketWatch: RunningShopctl, authWatch: RunningShopctl,
        products: [Int]
    ) async throws {
        #expect(await printsBasket(basketWatch, lines: 0), "basket watch: \(basketWatch.errors.tail())")
        let signedIn = await authWatch.output.first(within: .seconds(15)) { $0.contains("SIGNED_IN") ? true : nil }
        #expect(signedIn == true, "auth watch: \(authWatch.errors.tail())")

        // basket-svc stops (its watches end UNAVAILABLE, "watch again") and starts again on
        // the same port and data directory.
        try await stack.services.service(.basket).stop()
        #expect(await eventually(within: .seconds(10)) { reconnects(basketWatch) == 1 }, "\(basketWatch.errors.tail())")
        #expect(basketWatch.isRunning, "basket watch: \(basketWatch.errors.tail())")
        try await stack.services.restart(.basket)
        try await add(products[0], with: shopctl)
        #expect(await printsBasket(basketWatch, lines: 1), "basket watch: \(basketWatch.errors.tail())")

        // The gateway stops (holding the watches through its grace period, then cancelling
        // them) and starts again on the same port.
        try await stack.services.service(.gateway).stop(patience: .seconds(20))
        try await stack.services.restart(.gateway)
        try await add(products[1], with: shopctl)
        #expect(await printsBasket(basketWatch, lines: 2), "basket watch: \(basketWatch.errors.tail())")
        #expect(await eventually(within: .seconds(15)) { reconnects(authWatch) == 1 }, "\(authWatch.errors.tail())")
        #expect(basketWatch.isRunning && authWatch.isRunning)

        // Once per outage; standard output holds the messages only, none of them twice.
        #expect(reconnects(basketWatch) == 2, "\(basketWatch.errors.lines)")
        #expect(basketWatch.errors.lines.allSatisfy { $0 == WatchResume.reconnectingNotice }, "\(basketWatch.errors.lines)")
        #expect(try baskets(basketWatch).map(\.items.count) == [0, 1, 2], "\(basketWatch.output.lines)")
        #expect(try baskets(basketWatch).map(\.version) == [0, 1, 2])
        #expect(authWatch.output.lines.count == 1, "\(authWatch.output.lines)")

        // Signing out revokes the session and ends both watches. Auth watch prints SIGNED_OUT
        // and exits 0 — or, when the sign-out came while it was still waiting to reconnect (its
        // resumed stream prints nothing new, so the test cannot wait for it), its reconnect finds
        // the session gone (NOT_SIGNED_IN: logout deleted it here), exit 3: a final error either
        // way, never a reconnect loop. Basket watch ends SESSION_REVOKED, exit 3.
        try await shopctl.succeed(["auth", "logout"])
        let authStatus = await exitStatus(of: authWatch, within: .seconds(20))
        let states = try ShopctlJSON.decodeLines(WatchAuthStateResponse.self, authWatch.output.lines).map(\.state)
        if authStatus == 3 {
            let last = authWatch.errors.lines.last ?? ""
            #expect(states == [.signedIn] && (last.contains("NOT_SIGNED_IN") || last.contains("SESSION_REVOKED")), "\(authWatch.errors.lines)")
        } else {
            #expect(authStatus == 0, "auth watch: \(authWatch.errors.tail())")
            #expect(states == [.signedIn, .signedOut])
        }
        #expect(await exitStatus(of: basketWatch, within: .seconds(30)) == 3, "basket watch: \(basketWatch.errors.tail())")
        let basketEnd = basketWatch.errors.lines.last ?? ""
        #expect(basketEnd.contains("SESSION_REVOKED") || basketEnd.contains("NOT_SIGNED_IN"), "\(basketWatch.errors.lines)")
    }
}
