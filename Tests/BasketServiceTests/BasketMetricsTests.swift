import Contracts
import InProcessServices
import ServiceTestSupport
import Testing

/// basket-svc's domain metrics (issue 31): the `WatchBasket` streams open.
@Suite("Basket metrics")
struct BasketMetricsTests {
    /// `basket_watchers_open` in basket-svc's metrics now.
    static func watchersOpen(_ stack: BasketStack) throws -> Double? {
        try stack.metrics(of: .basket).value("basket_watchers_open")
    }

    @Test("basket_watchers_open rises with each WatchBasket stream and falls as each is cancelled")
    func watchersOpen() async throws {
        try await withBasketStack { stack in
            #expect(try Self.watchersOpen(stack) == 0)
            let ana = try await stack.shopper("ana")
            let ben = try await stack.shopper("ben")
            let watches = [BasketWatch.start(ana), BasketWatch.start(ana), BasketWatch.start(ben)]
            for watch in watches { #expect(await watch.first() != nil) }
            #expect(try Self.watchersOpen(stack) == 3)

            await watches[0].cancel()
            #expect(try await eventually { try Self.watchersOpen(stack) == 2 })
            for watch in watches.dropFirst() { await watch.cancel() }
            #expect(try await eventually { try Self.watchersOpen(stack) == 0 })
        }
    }
}
