import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport

/// The catalog as the tests see and shape it: products read like any client, products added
/// with the admin key.
extension BasketStack {
    /// How many products the seed catalog has (ids 1...24).
    static let seedProductCount = 24

    /// The product `id`, as catalog-svc serves it.
    func product(_ id: Int) async throws -> Product {
        try await catalogClient.unary(
            CatalogContract.getProduct, GetProductRequest(id: id), options: CallOptions(timeout: .seconds(15))
        ).product
    }

    /// Options carrying the admin key.
    private var adminOptions: CallOptions {
        CallOptions(metadata: [MetadataKey.apiKey: adminKey], timeout: .seconds(15))
    }

    /// Creates a product (admin `UpsertProduct`) and returns it with its new id.
    @discardableResult
    func createProduct(
        title: String, amount: Int = 1_250, currency: String = "USD", image: String = "https://img.shop.test/p.png",
        stock: Int = 100
    ) async throws -> Product {
        let product = Product(
            title: title, description: "Made for the basket tests.", category: "test goods",
            price: Money(amount: amount, currency: currency), image: image, rating: Rating(rate: 4, count: 1),
            stock: stock)
        return try await upsert(product)
    }

    /// Replaces a product (admin `UpsertProduct`), e.g. with another stock.
    @discardableResult
    func upsert(_ product: Product) async throws -> Product {
        try await catalogClient.unary(
            CatalogContract.upsertProduct, UpsertProductRequest(product: product), options: adminOptions
        ).product
    }

    /// Deletes product `id` from the catalog (admin `DeleteProduct`).
    func deleteProduct(_ id: Int) async throws {
        _ = try await catalogClient.unary(CatalogContract.deleteProduct, DeleteProductRequest(id: id), options: adminOptions)
    }

    /// Creates products until the catalog holds at least `count`; returns every product id.
    func catalogOfAtLeast(_ count: Int) async throws -> [Int] {
        var ids = Array(1...Self.seedProductCount)
        while ids.count < count {
            ids.append(try await createProduct(title: "Test product \(ids.count + 1)").id)
        }
        return ids
    }
}
