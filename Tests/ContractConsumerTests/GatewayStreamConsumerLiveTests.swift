import ContractTesting
import Contracts
import RPC
import RPCHTTP2
import Testing

/// The gateway's real proxy for streaming methods (`Router+Proxy`) between a client and the
/// services played from the gateway's contracts: server streams relayed message by message
/// (the mock sends the contract's messages, then ends or holds the stream open), and a client
/// stream whose every message the mock checks against the contract.
@Suite("gateway streams as a consumer")
struct GatewayStreamConsumerLiveTests {
    @Test("WatchAuthState passes each state through, and the end of the stream", .timeLimit(.minutes(1)))
    func watchAuthState() async throws {
        let states = try await GatewayConsumerLiveTests.withGateway(serving: [
            "auth-svc": [try AuthInteractions.getJwks(), try GatewayInteractions.watchAuthState()]
        ]) { client in
            try await client.serverStreaming(
                AuthContract.watchAuthState, Empty(), options: try GatewayConsumerLiveTests.signedIn()
            ) { messages in
                var states: [WatchAuthStateResponse] = []
                for try await message in messages { states.append(message) }
                return states
            }
        }
        #expect(states.map(\.state) == [.signedIn, .signedOut])
        #expect(states.first?.user?.email == GatewayInteractions.email)
    }

    @Test("WatchBasket passes each basket through while the stream stays open, until the client cancels", .timeLimit(.minutes(1)))
    func watchBasket() async throws {
        let baskets = try await GatewayConsumerLiveTests.withGateway(serving: [
            "auth-svc": [try AuthInteractions.getJwks()], "basket-svc": [try GatewayInteractions.watchBasket()],
        ]) { client in
            try await client.withCall(path: BasketContract.watchBasket.path, options: try GatewayConsumerLiveTests.signedIn()) { call in
                try await call.send(try JSONCodec.shared.encode(Empty()))
                call.finishSending()
                var baskets: [Basket] = []
                while baskets.count < 2, let data = try await call.nextMessage() {
                    baskets.append(try JSONCodec.shared.decode(Basket.self, from: data))
                }
                call.cancel()
                return baskets
            }
        }
        #expect(baskets.map(\.itemCount) == [2, 3])
    }

    @Test("ImportProducts relays every message of the client's stream with the admin key, and the one answer")
    func importProducts() async throws {
        let result = try await GatewayConsumerLiveTests.withGateway(serving: [
            "catalog-svc": [try GatewayInteractions.importProducts()]
        ]) { client in
            try await client.clientStreaming(
                CatalogContract.importProducts, options: CallOptions(metadata: [MetadataKey.apiKey: "contract-test-admin-key"])
            ) { sender in
                for product in GatewayInteractions.importedProducts {
                    try await sender.send(ImportProductsRequest(product: product))
                }
            }
        }
        #expect(result.created == GatewayInteractions.importedProducts.count)
        #expect(result.failed.isEmpty)
    }
}
