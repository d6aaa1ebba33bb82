import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// Every basket method needs a valid access token (API.md §3, "Every authenticated method").
@Suite("Authentication")
struct AuthenticationTests {
    /// Each method of `BasketService` with a valid request body.
    static let requests: [(method: String, json: String)] = [
        ("GetBasket", "{}"),
        ("AddItem", #"{"productId": 1}"#),
        ("UpdateItemCount", #"{"itemId": "8a1c5d3e-6f2b-4c7a-9d0e-1b2c3d4e5f60", "count": 2}"#),
        ("RemoveItem", #"{"itemId": "8a1c5d3e-6f2b-4c7a-9d0e-1b2c3d4e5f60"}"#),
        ("ClearBasket", "{}"),
        ("WatchBasket", "{}"),
    ]

    @Test("without a token every method is UNAUTHENTICATED MISSING_TOKEN; a bad token INVALID_ACCESS_TOKEN")
    func tokensRequired() async throws {
        try await withBasketStack { stack in
            let ana = try await stack.shopper("ana")
            for (method, json) in Self.requests {
                await expectRPCError(AuthReason.missingToken) {
                    try await Self.call(stack.basketClient, method, json: json, metadata: [:])
                }
                for header in ["Bearer not.a.jwt", "Bearer " + String(ana.accessToken.reversed()), "Basic YW5hOnB3"] {
                    await expectRPCError(.unauthenticated, reason: nil) {
                        try await Self.call(stack.basketClient, method, json: json, metadata: [MetadataKey.authorization: header])
                    }
                }
                await expectRPCError(AuthReason.invalidAccessToken) {
                    try await Self.call(
                        stack.basketClient, method, json: json,
                        metadata: [MetadataKey.authorization: "Bearer not.a.jwt"])
                }
            }
            #expect(try await ana.basket().version == 0, "no refused call changed anything")
        }
    }

    /// Calls a basket method with `metadata` and reads every response.
    static func call(_ client: RPCClient, _ method: String, json: String, metadata: Metadata) async throws -> Int {
        let options = CallOptions(metadata: metadata, timeout: .seconds(15))
        return try await client.withCall(path: "/\(BasketContract.service)/\(method)", options: options) { call in
            try await call.send(Data(json.utf8))
            call.finishSending()
            var count = 0
            while try await call.nextMessage() != nil { count += 1 }
            return count
        }
    }
}
