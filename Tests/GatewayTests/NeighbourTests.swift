import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// Clients behind one address, or one user's many calls, cannot take the gateway away from
/// the others (issue 25, points 3 and 4).
@Suite("Gateway fairness between neighbours")
struct NeighbourTests {
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
                if (try? await gateway.unary(BasketContract.getBasket, Empty(), options: victim.options)) != nil {
                    served += 1
                }
            }
            #expect(served * 100 >= rounds * 95, "the victim was served \(served) of \(rounds) calls")
            // The neighbour's bad tokens are still checked, and refused as too many.
            await expectRPCError(.resourceExhausted, reason: "RATE_LIMITED") {
                try await gateway.unary(BasketContract.getBasket, Empty(), options: bad)
            }
            // A valid token from the same address is never refused, even right after.
            let basket = try await gateway.unary(BasketContract.getBasket, Empty(), options: victim.options)
            #expect(basket.itemCount == 0)
        }
    }
}
