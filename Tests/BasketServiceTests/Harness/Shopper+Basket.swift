import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport

/// The basket calls a shopper makes, to basket-svc.
extension Shopper {
    /// `GetBasket`.
    func basket() async throws -> Basket {
        try await client.unary(BasketContract.getBasket, Empty(), options: options())
    }

    /// `AddItem` of `productId` with `count`.
    @discardableResult
    func add(_ productId: Int, count: Int = 1) async throws -> Basket {
        try await client.unary(BasketContract.addItem, AddItemRequest(productId: productId, count: count), options: options())
    }

    /// `UpdateItemCount` of `itemId`.
    @discardableResult
    func setCount(_ itemId: String, to count: Int, expectedVersion: Int? = nil) async throws -> Basket {
        try await client.unary(
            BasketContract.updateItemCount,
            UpdateItemCountRequest(itemId: itemId, count: count, expectedVersion: expectedVersion), options: options())
    }

    /// `RemoveItem` of `itemId`.
    @discardableResult
    func remove(_ itemId: String) async throws -> Basket {
        try await client.unary(BasketContract.removeItem, RemoveItemRequest(itemId: itemId), options: options())
    }

    /// `ClearBasket`.
    @discardableResult
    func clear(expectedVersion: Int? = nil) async throws -> Basket {
        try await client.unary(
            BasketContract.clearBasket, ClearBasketRequest(expectedVersion: expectedVersion), options: options())
    }

    /// Sends `json` as the one request of the basket method `method` (e.g. "AddItem") with this
    /// session's token, and returns the response messages: for bodies no typed request can express.
    func raw(_ method: String, json: String) async throws -> [Data] {
        try await client.withCall(path: "/\(BasketContract.service)/\(method)", options: options()) { call in
            try await call.send(Data(json.utf8))
            call.finishSending()
            var messages: [Data] = []
            while let message = try await call.nextMessage() { messages.append(message) }
            return messages
        }
    }

    /// `raw(_:json:)` whose one response is a basket.
    func rawBasket(_ method: String, json: String) async throws -> Basket {
        let messages = try await raw(method, json: json)
        guard messages.count == 1, let message = messages.first else {
            throw RPCError(code: .internal, message: "expected one response, got \(messages.count)")
        }
        return try JSONCodec.shared.decode(Basket.self, from: message)
    }
}
