import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// What only basket-svc's process and the wire show of `WatchBasket`: a shutdown ending the
/// open watches (and saying so in the log), and coalescing for a reader whose HTTP/2 window
/// is full. The rest runs in process (``WatchBasketTests``).
@Suite("WatchBasket (live)")
struct WatchBasketLiveTests {
    @Test("a watcher that goes away is removed at once; shutdown ends the rest with UNAVAILABLE")
    func cleanup() async throws {
        try await withLiveBasketStack { stack in
            let ana = try await stack.shopper("ana")
            let ben = try await stack.shopper("ben")
            let leaving = (0..<20).map { index in BasketWatch.start(index.isMultiple(of: 2) ? ana : ben) }
            let staying = BasketWatch.start(ana)
            for watch in leaving + [staying] { #expect(await watch.first() != nil) }
            for watch in leaving { await watch.cancel() }
            try await ana.add(1)
            #expect(await staying.waitFor(version: 1) != nil)
            try await Task.sleep(for: .milliseconds(200))

            let stopping = ContinuousClock.now
            let basket = try stack.basket
            await basket.stop()
            #expect(ContinuousClock.now - stopping < .seconds(2), "an open watch held the shutdown")
            let ended = await basket.log.first(within: .seconds(1)) { line in
                line.contains("ending open watches") ? line : nil
            }
            #expect(ended?.contains("count=1") == true, "\(ended ?? basket.log.tail())")
            let deadline = ContinuousClock.now + .seconds(2)
            while !staying.hasEnded && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
            #expect((staying.ending as? RPCError)?.code == .unavailable, "\(String(describing: staying.ending))")
        }
    }

    @Test("a slow watcher gets the latest basket without every one of 50 intermediate versions")
    func slowWatcherIsCoalesced() async throws {
        try await withLiveBasketStack { stack in
            let ana = try await stack.shopper("ana")
            // Big lines make each snapshot about 45 KB, so that 50 of them are far more than
            // the transport buffers between basket-svc and a reader that stopped reading.
            let imagePath = String(repeating: "long-image-path/", count: 120)
            for index in 0..<20 {
                let product = try await stack.createProduct(
                    title: "Product \(index) " + String(repeating: "with a long title ", count: 10),
                    image: "https://img.shop.test/\(imagePath)\(index).png")
                try await ana.add(product.id)
            }
            let item = try #require(try await ana.basket().items.first)

            var configuration = ClientConfiguration()
            configuration.limits.initialStreamWindow = 16 * 1024
            let reader = try RPCClient(
                target: SocketAddressText(host: "127.0.0.1", port: try stack.basket.port), configuration: configuration)
            let watchPath = "/\(BasketContract.service)/WatchBasket"
            let options = ana.options(timeout: .seconds(60))
            let (first, received, final) = try await reader.withCall(path: watchPath, options: options) { call in
                try await call.send(Data("{}".utf8))
                call.finishSending()
                let first = try JSONCodec.shared.decode(Basket.self, from: try #require(try await call.nextMessage()))
                for change in 0..<50 {
                    try await ana.setCount(item.id, to: change.isMultiple(of: 2) ? 2 : 3)
                }
                let final = try await ana.basket()
                var received: [Basket] = []
                while received.last?.version != final.version, let data = try await call.nextMessage() {
                    received.append(try JSONCodec.shared.decode(Basket.self, from: data))
                }
                call.cancel()
                return (first, received, final)
            }
            await reader.close()
            #expect(final.version == first.version + 50)
            #expect(received.last == final)
            #expect(received.count < 50, "the slow watcher got \(received.count) snapshots")
            let versions = [first.version] + received.map(\.version)
            #expect(zip(versions, versions.dropFirst()).allSatisfy { $0 < $1 }, "versions went back: \(versions)")
        }
    }
}
