import Contracts
internal import Foundation
import RPC
import ServiceKit

/// Changes: each is one transaction in the store, answered with the basket it left and
/// published to the caller's watchers.
extension BasketService {
    /// `AddItem`: a new line for a product, with its title, unit price and image from the
    /// catalog. Refusals that need only the basket (already there, full) are checked before the
    /// catalog is asked, and all of them again in the transaction that adds the line.
    func addItem(_ request: AddItemRequest, context: ServerContext) async throws -> Basket {
        let caller = try context.requireUser()
        try Self.checkCount(request.count, allowed: BasketContract.countRange)
        // No product has an id below 1; there is nothing to ask the catalog.
        guard request.productId > 0 else { throw BasketError.productNotFound(productID: request.productId) }
        if let refusal = try await store.basket(userID: caller.id).refusal(toAdd: request.productId) { throw refusal }

        let product = try await catalog.product(request.productId, context: context)
        guard product.price.isUnitPrice else {
            throw BasketError.priceOutOfRange(productID: request.productId)
        }
        let line = LineRecord(
            id: UUID().uuidString.lowercased(), productID: request.productId, title: product.title,
            unitAmount: product.price.amount, currency: product.price.currency, imageURL: product.image,
            count: request.count)
        return published(try await store.add(line, userID: caller.id), userID: caller.id)
    }

    /// `UpdateItemCount`: 0 removes the line, 1...10 sets its count.
    func updateItemCount(_ request: UpdateItemCountRequest, context: ServerContext) async throws -> Basket {
        let caller = try context.requireUser()
        let itemID = try Self.itemID(request.itemId)
        try Self.checkCount(request.count, allowed: 0...BasketContract.countRange.upperBound)
        let expectedVersion = try Self.expectedVersion(request.expectedVersion)
        let basket = try await store.setCount(
            request.count, itemID: itemID, userID: caller.id, expectedVersion: expectedVersion)
        return published(basket, userID: caller.id)
    }

    /// `RemoveItem`: removes a line.
    func removeItem(_ request: RemoveItemRequest, context: ServerContext) async throws -> Basket {
        let caller = try context.requireUser()
        let itemID = try Self.itemID(request.itemId)
        let basket = try await store.setCount(0, itemID: itemID, userID: caller.id, expectedVersion: nil)
        return published(basket, userID: caller.id)
    }

    /// `ClearBasket`: removes every line.
    func clearBasket(_ request: ClearBasketRequest, context: ServerContext) async throws -> Basket {
        let caller = try context.requireUser()
        let expectedVersion = try Self.expectedVersion(request.expectedVersion)
        let basket = try await store.clear(userID: caller.id, expectedVersion: expectedVersion)
        return published(basket, userID: caller.id)
    }
}
