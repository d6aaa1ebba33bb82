import Contracts
internal import Foundation
import RPC
import ServiceKit

/// Changes: each is one transaction in the store, answered with the basket it left and
/// published to the caller's watchers.
extension BasketService {
    /// `AddItem`: a new line for a product, with its title, unit price and image from the
    /// catalog, refused when the count is above the product's stock. Refusals that need only
    /// the basket (already there, full) are checked before the catalog is asked, and all of
    /// them again in the transaction that adds the line.
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
        try Self.checkStock(of: product, covers: request.count)
        let line = LineRecord(
            id: UUID().uuidString.lowercased(), productID: request.productId, title: product.title,
            unitAmount: product.price.amount, currency: product.price.currency, imageURL: product.image,
            count: request.count)
        return published(try await store.add(line, userID: caller.id), userID: caller.id)
    }

    /// `UpdateItemCount`: 0 removes the line, 1...10 sets its count. Raising a count asks the
    /// catalog for the product's stock (``checkStock(raising:to:userID:expectedVersion:context:)``);
    /// lowering or removing a line never does, so it works while catalog-svc is down.
    func updateItemCount(_ request: UpdateItemCountRequest, context: ServerContext) async throws -> Basket {
        let caller = try context.requireUser()
        let itemID = try Self.itemID(request.itemId)
        try Self.checkCount(request.count, allowed: 0...BasketContract.countRange.upperBound)
        let expectedVersion = try Self.expectedVersion(request.expectedVersion)
        try await checkStock(
            raising: itemID, to: request.count, userID: caller.id, expectedVersion: expectedVersion, context: context)
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

    // MARK: Stock

    /// Throws `OUT_OF_STOCK` with what is left unless `product`'s stock covers `count`.
    static func checkStock(of product: Product, covers count: Int) throws(BasketError) {
        guard count <= product.stock else {
            throw BasketError.outOfStock(productID: product.id, available: product.stock)
        }
    }

    /// When `count` raises the line `itemID` of `userID`'s basket, checks the catalog's stock of
    /// its product: `OUT_OF_STOCK` when short, `PRODUCT_NOT_FOUND` when the product is gone.
    /// The refusals that need only the basket (`VERSION_CONFLICT`, `ITEM_NOT_FOUND`) are answered
    /// first, without the catalog, and again in the transaction that sets the count. Stock is a
    /// hint for the shopper (API.md §5): the order checks it again and reserves it.
    func checkStock(
        raising itemID: String, to count: Int, userID: String, expectedVersion: Int?, context: ServerContext
    ) async throws {
        let current = try await store.basket(userID: userID)
        try BasketStore.check(expectedVersion, against: current)
        guard let line = current.lines.first(where: { $0.id == itemID }) else { throw BasketError.itemNotFound }
        guard count > line.count else { return }
        try Self.checkStock(of: try await catalog.product(line.productID, context: context), covers: count)
    }
}
