import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// One user's many watches cannot take the gateway's HTTP/2 connections to a service away from
/// the others' unary calls (issue 25, point 4): a limit only the wire has (NeighbourTests has the rest).
@Suite("Gateway fairness between neighbours, live")
struct NeighbourLiveTests {
    @Test("with every stream of the upstream connection taken by watches, a unary call still answers at once")
    func unaryBesideWatches() async throws {
        // One connection to each service: the 256 streams the watches below hold, every one.
        try await withLiveGateway(gatewayArguments: ["--upstream-connections", "1", "--max-watches-per-user", "400", "--rate-limit", "0"]) {
            stack in
            let gateway = try stack.gateway
            let watcher = try await stack.newShopper()
            let shopper = try await stack.newShopper()
            let address = try #require(SocketAddressText(try stack.address(of: .gateway)))
            // Two connections to the gateway, each under its own limit of 256 streams.
            let clients = [try RPCClient(target: address), try RPCClient(target: address)]
            let watches = try await withThrowingTaskGroup(of: (any ClientCall).self) { group in
                for index in 0..<256 {
                    group.addTask { try await openBasketWatch(watcher, through: clients[index % 2]) }
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
