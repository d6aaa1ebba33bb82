import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// Clients behind one address, or one user's many calls, cannot take the gateway away from
/// the others (issue 25, points 3 and 4).
@Suite("Gateway fairness between neighbours")
struct NeighbourLiveTests {
    /// `token` with its signature changed: well formed, signed by nobody.
    static func forged(_ token: String) -> String {
        var parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let first = parts[2].first else { return token + "x" }
        parts[2] = (first == "A" ? "B" : "A") + parts[2].dropFirst()
        return parts.joined(separator: ".")
    }

    @Test("a neighbour trickling bad tokens from the same address never locks out a valid token")
    func badTokensOfANeighbour() async throws {
        try await withGateway { stack in
            let gateway = try stack.gateway
            let victim = try await stack.newShopper()
            let bad = plain([MetadataKey.authorization: "Bearer \(Self.forged(victim.accessToken))"])
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

    /// Opens a WatchBasket through `client` and reads its first message (the stream is then
    /// open up to basket-svc); a refusal is thrown.
    static func watch(_ shopper: Shopper, through client: RPCClient) async throws -> any ClientCall {
        let call = try client.makeCall(
            path: BasketContract.watchBasket.path, options: CallOptions(metadata: shopper.metadata(), timeout: .seconds(120)))
        do {
            try await call.send(try JSONCodec.shared.encode(Empty()))
            call.finishSending()
            _ = try await next(Basket.self, from: call)
            return call
        } catch {
            call.cancel()
            throw error
        }
    }

    /// Whether `shopper` may open one more watch now (the probe is closed again at once).
    static func mayWatch(_ shopper: Shopper, through client: RPCClient) async -> Bool {
        guard let call = try? await watch(shopper, through: client) else { return false }
        call.cancel()
        return true
    }

    /// A watch opened as soon as the gateway lets `shopper` have one (within 10 s), or nil: a
    /// place is given back once the gateway's handler of an ended watch has finished.
    static func watchOnceFree(_ shopper: Shopper, through client: RPCClient) async -> (any ClientCall)? {
        for _ in 0..<100 {
            if let call = try? await watch(shopper, through: client) { return call }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    @Test("a user holds at most the cap of watches per method, however they call; each ending watch gives its place back")
    func watchCap() async throws {
        try await withGateway(gatewayArguments: ["--max-watches-per-user", "3"]) { stack in
            let gateway = try stack.gateway
            let shopper = try await stack.newShopper()
            var watches: [any ClientCall] = []
            for _ in 0..<3 { watches.append(try await Self.watch(shopper, through: gateway)) }
            await expectRPCError(.resourceExhausted, reason: "TOO_MANY_WATCHES") {
                try await Self.watch(shopper, through: gateway)
            }
            // Not by another session (a new token) or another connection either.
            let again = try await stack.accounts(through: .gateway).signIn(shopper.email)
            let secondSession = Shopper(email: shopper.email, session: again, client: gateway)
            let address = try #require(SocketAddressText(try stack.address(of: .gateway)))
            let other = try RPCClient(target: address)
            await expectRPCError(.resourceExhausted, reason: "TOO_MANY_WATCHES") {
                try await Self.watch(secondSession, through: other)
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
                try await Self.watch(shopper, through: gateway)
            }
            // The client's connection drops: so do the places of its watches.
            await other.close()
            watches.append(try #require(await Self.watchOnceFree(shopper, through: gateway)))
            await expectRPCError(.resourceExhausted, reason: "TOO_MANY_WATCHES") {
                try await Self.watch(shopper, through: gateway)
            }
            // The upstream ends them (basket-svc goes away): every place comes back.
            try await stack.service(.basket).kill()
            for watch in watches { _ = try? await watch.nextMessage() }
            try await stack.restart(.basket)
            var reopened: [any ClientCall] = []
            for _ in 0..<3 { reopened.append(try #require(await Self.watchOnceFree(shopper, through: gateway))) }
            for watch in reopened + watches { watch.cancel() }
        }
    }

    @Test("with every stream of the upstream connection taken by watches, a unary call still answers at once")
    func unaryBesideWatches() async throws {
        // One connection to each service: the 256 streams the watches below hold, every one.
        try await withGateway(gatewayArguments: ["--upstream-connections", "1", "--max-watches-per-user", "400", "--rate-limit", "0"]) {
            stack in
            let gateway = try stack.gateway
            let watcher = try await stack.newShopper()
            let shopper = try await stack.newShopper()
            let address = try #require(SocketAddressText(try stack.address(of: .gateway)))
            // Two connections to the gateway, each under its own limit of 256 streams.
            let clients = [try RPCClient(target: address), try RPCClient(target: address)]
            let watches = try await withThrowingTaskGroup(of: (any ClientCall).self) { group in
                for index in 0..<256 {
                    group.addTask { try await Self.watch(watcher, through: clients[index % 2]) }
                }
                return try await group.reduce(into: [any ClientCall]()) { $0.append($1) }
            }
            for _ in 0..<5 {
                let start = ContinuousClock.now
                let basket = try await gateway.unary(
                    BasketContract.getBasket, Empty(), options: CallOptions(metadata: shopper.metadata(), timeout: .seconds(3)))
                let took = ContinuousClock.now - start
                #expect(basket.itemCount == 0)
                #expect(took < .seconds(1), "GetBasket took \(took) beside \(watches.count) watches")
            }
            for watch in watches { watch.cancel() }
            for client in clients { await client.close() }
        }
    }
}
