import Contracts
import Foundation
import InProcessServices
import RPC
import ServiceTestSupport
import Testing

/// Clients behind one address, or one user's many calls, cannot take the gateway away from
/// the others (issue 25, points 3 and 4): the gateway and the four services built in this process.
@Suite("Gateway fairness between neighbours")
struct NeighbourTests {
    @Test("a neighbour trickling bad tokens from the same address never locks out a valid token")
    func badTokensOfANeighbour() async throws {
        try await withGateway { stack in
            let gateway = try stack.gateway
            let victim = try await stack.newShopper()
            let bad = plain([MetadataKey.authorization: "Bearer \(forged(victim.accessToken))"])
            // Past the throttle's burst, as the neighbour had been for a while.
            for _ in 0..<25 {
                _ = try? await gateway.unary(BasketContract.getBasket, Empty(), options: bad)
            }
            var served = 0
            let rounds = 40
            for _ in 0..<rounds {
                _ = try? await gateway.unary(BasketContract.getBasket, Empty(), options: bad)
                if (try? await gateway.unary(BasketContract.getBasket, Empty(), options: victim.options())) != nil {
                    served += 1
                }
            }
            #expect(served * 100 >= rounds * 95, "the victim was served \(served) of \(rounds) calls")
            // The neighbour's bad tokens are still checked, and refused as too many.
            await expectRPCError(.resourceExhausted, reason: "RATE_LIMITED") {
                try await gateway.unary(BasketContract.getBasket, Empty(), options: bad)
            }
            // A valid token from the same address is never refused, even right after.
            let basket = try await gateway.unary(BasketContract.getBasket, Empty(), options: victim.options())
            #expect(basket.itemCount == 0)
        }
    }

    /// Whether `shopper` may open one more watch now (the probe is closed again at once).
    static func mayWatch(_ shopper: Shopper, through client: RPCClient) async -> Bool {
        guard let call = try? await openBasketWatch(shopper, through: client) else { return false }
        call.cancel()
        return true
    }

    /// A watch opened as soon as the gateway lets `shopper` have one (within 10 s), or nil: a
    /// place is given back once the gateway's handler of an ended watch has finished.
    static func watchOnceFree(_ shopper: Shopper, through client: RPCClient) async -> (any ClientCall)? {
        for _ in 0..<100 {
            if let call = try? await openBasketWatch(shopper, through: client) { return call }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    @Test("a user holds at most the cap of watches per method, however they call; each ending watch gives its place back")
    func watchCap() async throws {
        try await withGateway(InProcessGatewayOptions(maxWatchesPerUser: 3)) { stack in
            let gateway = try stack.gateway
            let shopper = try await stack.newShopper()
            var watches: [any ClientCall] = []
            for _ in 0..<3 { watches.append(try await openBasketWatch(shopper, through: gateway)) }
            await expectRPCError(.resourceExhausted, reason: "TOO_MANY_WATCHES") {
                try await openBasketWatch(shopper, through: gateway)
            }
            // Not by another session (a new token) or another connection either.
            let again = try await stack.accounts(through: .gateway).signIn(shopper.email)
            let secondSession = Shopper(email: shopper.email, session: again, client: gateway)
            let other = try stack.gatewayClient(from: "127.0.0.1:0")
            await expectRPCError(.resourceExhausted, reason: "TOO_MANY_WATCHES") {
                try await openBasketWatch(secondSession, through: other)
            }
            // The cap is per method and per user.
            let authWatch = try gateway.makeCall(path: AuthContract.watchAuthState.path, options: shopper.options())
            try await authWatch.send(try JSONCodec.shared.encode(Empty()))
            authWatch.finishSending()
            #expect(try await next(WatchAuthStateResponse.self, from: authWatch).state == .signedIn)
            authWatch.cancel()
            let neighbour = try await stack.newShopper()
            #expect(await Self.mayWatch(neighbour, through: gateway))

            // The client cancels one: its place comes back.
            watches.removeLast().cancel()
            watches.append(try #require(await Self.watchOnceFree(secondSession, through: other)))
            await expectRPCError(.resourceExhausted, reason: "TOO_MANY_WATCHES") {
                try await openBasketWatch(shopper, through: gateway)
            }
            // The client's connection drops: so do the places of its watches.
            await other.close()
            watches.append(try #require(await Self.watchOnceFree(shopper, through: gateway)))
            await expectRPCError(.resourceExhausted, reason: "TOO_MANY_WATCHES") {
                try await openBasketWatch(shopper, through: gateway)
            }
            // The upstream ends them (basket-svc goes away): every place comes back.
            try await stack.cutGatewayOff(from: .basket)
            for watch in watches {
                await expectRPCError(.unavailable) { while try await watch.nextMessage() != nil {} }
            }
            try stack.reconnectGateway(to: .basket)
            var reopened: [any ClientCall] = []
            for _ in 0..<3 { reopened.append(try #require(await Self.watchOnceFree(shopper, through: gateway))) }
            for watch in reopened + watches { watch.cancel() }
        }
    }
}
