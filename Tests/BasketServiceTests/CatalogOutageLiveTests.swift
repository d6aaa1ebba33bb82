import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing

/// basket-svc with catalog-svc gone: reads and catalog-free changes work, AddItem and raising
/// a count (which need the stock) fail fast.
@Suite("Catalog outage")
struct CatalogOutageLiveTests {
    @Test("with catalog-svc killed, GetBasket and WatchBasket work and AddItem is UNAVAILABLE UPSTREAM_UNAVAILABLE fast")
    func catalogDown() async throws {
        try await withLiveBasketStack { stack in
            let ana = try await stack.shopper("ana")
            try await ana.add(1)
            let before = try await ana.add(2, count: 2)
            let watch = BasketWatch.start(ana)
            #expect(await watch.first() == before)

            try await stack.catalog.kill()
            #expect(try await ana.basket() == before)
            for productId in [3, 4] {
                let asked = ContinuousClock.now
                await expectRPCError(GatewayReason.upstreamUnavailable) { try await ana.add(productId) }
                #expect(ContinuousClock.now - asked < .seconds(3), "AddItem took \(ContinuousClock.now - asked)")
            }
            // Refusals that need only the basket still answer as usual.
            await expectRPCError(BasketReason.alreadyInBasket) { try await ana.add(1) }

            // Raising a count needs the stock, so it fails fast too.
            let item = try #require(before.line(of: 2))
            await expectRPCError(GatewayReason.upstreamUnavailable) { try await ana.setCount(item.id, to: 7) }

            // Changes that need no catalog still work, and watchers still see them.
            let changed = try await ana.setCount(item.id, to: 1)
            #expect(await watch.waitFor(version: changed.version) == changed)
            let late = BasketWatch.start(ana)
            #expect(await late.first() == changed)
            for watch in [watch, late] { await watch.cancel() }
        }
    }

    @Test("a stale expectedVersion or an unknown item is answered before the catalog is asked")
    func basketRefusalsFirst() async throws {
        try await withLiveBasketStack { stack in
            let ana = try await stack.shopper("ana")
            let basket = try await ana.add(2)
            let item = try #require(basket.line(of: 2))
            try await stack.catalog.kill()
            await expectRPCError(BasketReason.versionConflict) {
                try await ana.setCount(item.id, to: 5, expectedVersion: basket.version - 1)
            }
            await expectRPCError(BasketReason.itemNotFound) { try await ana.setCount(UUID().uuidString, to: 5) }
            await expectRPCError(GatewayReason.upstreamUnavailable) { try await ana.setCount(item.id, to: 5) }
        }
    }
}
