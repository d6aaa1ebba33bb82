import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing

/// `WatchBasket`: the basket at once, then every change from any session of the user, fast;
/// nothing from other users; coalesced for slow readers; cleaned up when a watcher leaves.
@Suite("WatchBasket")
struct WatchBasketTests {
    @Test("two watchers of one user see every change made from a third session; another user's watcher sees nothing")
    func fanOut() async throws {
        try await withBasketStack { stack in
            let phone = try await stack.shopper("ana")
            let tablet = try await stack.anotherSession(of: phone)
            let laptop = try await stack.anotherSession(of: phone)
            let ben = try await stack.shopper("ben")
            let watches = [BasketWatch.start(phone), BasketWatch.start(tablet)]
            let bens = BasketWatch.start(ben)
            for watch in watches + [bens] {
                #expect(await watch.first()?.version == 0)
            }

            var answers: [Basket] = []
            var latencies: [Duration] = []
            let changes: [@Sendable () async throws -> Basket] = [
                { try await laptop.add(1) },
                { try await laptop.add(2, count: 3) },
                { try await laptop.setCount(try await laptop.basket().items[0].id, to: 5) },
                { try await laptop.remove(try await laptop.basket().items[1].id) },
                { try await laptop.clear() },
            ]
            for change in changes {
                let sent = ContinuousClock.now
                let answer = try await change()
                answers.append(answer)
                for watch in watches {
                    let seen = await watch.waitFor(version: answer.version)
                    #expect(seen == answer)
                    if let arrival = watch.arrivals.first(where: { $0.basket.version == answer.version }) {
                        latencies.append(arrival.time - sent)
                    }
                }
            }
            for watch in watches {
                #expect(watch.baskets.map(\.version) == [0, 1, 2, 3, 4, 5])
                #expect(Array(watch.baskets.dropFirst()) == answers)
            }
            try await Task.sleep(for: .milliseconds(300))
            #expect(bens.baskets.map(\.version) == [0], "ben's watcher saw another user's basket")
            #expect(try #require(latencies.max()) < .seconds(1))
            let median = latencies.sorted()[latencies.count / 2]
            #expect(median < .milliseconds(100), "median change-to-watcher time \(median)")
            for watch in watches + [bens] { await watch.cancel() }
        }
    }

    @Test("the first message is the current basket")
    func firstMessageIsCurrent() async throws {
        try await withBasketStack { stack in
            let ana = try await stack.shopper("ana")
            try await ana.add(4, count: 2)
            let current = try await ana.add(11)
            let watch = BasketWatch.start(ana)
            #expect(await watch.first() == current)
            await watch.cancel()
        }
    }

    @Test("a watch ends with SESSION_REVOKED soon after its session signs out; other sessions' watches go on")
    func revokedSessionEndsWatch() async throws {
        try await withBasketStack { stack in
            let phone = try await stack.shopper("ana")
            let tablet = try await stack.anotherSession(of: phone)
            let phoneWatch = BasketWatch.start(phone)
            let tabletWatch = BasketWatch.start(tablet)
            for watch in [phoneWatch, tabletWatch] { #expect(await watch.first() != nil) }
            _ = try await stack.authClient.unary(
                AuthContract.signOut, SignOutRequest(scope: .local),
                options: CallOptions(
                    metadata: [MetadataKey.authorization: "Bearer \(phone.accessToken)"], timeout: .seconds(15)))

            // auth-svc's feed is polled every 15 s and a watch checks every 5 s: well within API.md's 60 s.
            let deadline = ContinuousClock.now + .seconds(40)
            while !phoneWatch.hasEnded && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
            let ending = phoneWatch.ending as? RPCError
            #expect(ending?.code == .unauthenticated && ending?.reason == AuthReason.sessionRevoked.rawValue, "\(String(describing: ending))")
            let changed = try await tablet.add(1)
            #expect(await tabletWatch.waitFor(version: changed.version) == changed)
            await tabletWatch.cancel()
        }
    }
}
