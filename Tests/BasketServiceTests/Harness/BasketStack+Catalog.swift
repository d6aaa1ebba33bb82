import Contracts
import Foundation
import RPC
import RPCHTTP2

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

    /// Creates a product (admin `UpsertProduct`) and returns it with its new id.
    @discardableResult
    func createProduct(
        title: String, amount: Int = 1_250, currency: String = "USD", image: String = "https://img.shop.test/p.png"
    ) async throws -> Product {
        let product = Product(
            title: title, description: "Made for the basket tests.", category: "test goods",
            price: Money(amount: amount, currency: currency), image: image, rating: Rating(rate: 4, count: 1),
            stock: 100)
        let options = CallOptions(metadata: [MetadataKey.apiKey: adminKey], timeout: .seconds(15))
        return try await catalogClient.unary(
            CatalogContract.upsertProduct, UpsertProductRequest(product: product), options: options
        ).product
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
