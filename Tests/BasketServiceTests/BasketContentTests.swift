import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// What a basket holds: lines made from the catalog, totals in minor units, versions, times.
@Suite("Basket contents")
struct BasketContentTests {
    @Test("a user who never changed their basket has an empty one at version 0, total 0 USD")
    func emptyBasket() async throws {
        try await withBasketStack { stack in
            let ana = try await stack.shopper("ana")
            let basket = try await ana.basket()
            #expect(basket.items.isEmpty)
            #expect(basket.itemCount == 0)
            #expect(basket.total == Money(amount: 0, currency: "USD"))
            #expect(basket.version == 0)
            #expect(isRFC3339(basket.updatedAt), "\(basket.updatedAt)")
        }
    }

    @Test("AddItem takes title, unit price and image from the catalog and prices the line")
    func lineFromCatalog() async throws {
        try await withBasketStack { stack in
            let ana = try await stack.shopper("ana")
            let product = try await stack.product(3)
            let basket = try await ana.add(3, count: 4)
            let line = try #require(basket.line(of: 3))
            #expect(line.productTitle == product.title)
            #expect(line.unitPrice == product.price)
            #expect(line.imageURL == product.image)
            #expect(line.count == 4)
            #expect(line.lineTotal == Money(amount: product.price.amount * 4, currency: product.price.currency))
            #expect(UUID(uuidString: line.id) != nil, "item id \(line.id) is not a UUID")
            #expect(basket.itemCount == 4)
            #expect(basket.total == line.lineTotal)
            #expect(basket.version == 1)
            #expect(isRFC3339(basket.updatedAt), "\(basket.updatedAt)")
            #expect(try await ana.basket() == basket)
        }
    }

    @Test("a product renamed and repriced in the catalog later keeps the line as it was added")
    func storedLinesAreServed() async throws {
        try await withBasketStack { stack in
            let ana = try await stack.shopper("ana")
            let created = try await stack.createProduct(title: "Walnut desk lamp", amount: 4_999)
            try await ana.add(created.id)
            var renamed = created
            renamed.title = "Oak desk lamp"
            renamed.price.amount = 5_999
            _ = try await stack.catalogClient.unary(
                CatalogContract.upsertProduct, UpsertProductRequest(product: renamed),
                options: .init(metadata: [MetadataKey.apiKey: stack.adminKey], timeout: .seconds(15)))
            let line = try #require(try await ana.basket().line(of: created.id))
            #expect(line.productTitle == "Walnut desk lamp")
            #expect(line.unitPrice.amount == 4_999)
        }
    }

    @Test("count defaults to 1 when AddItem leaves it out")
    func defaultCount() async throws {
        try await withBasketStack { stack in
            let ana = try await stack.shopper("ana")
            let basket = try await ana.rawBasket("AddItem", json: #"{"productId": 5}"#)
            #expect(basket.line(of: 5)?.count == 1)
            #expect(basket.itemCount == 1)
        }
    }

    @Test("totals add up over several lines, lines stay oldest first, version goes up by one per change")
    func totalsAndVersions() async throws {
        try await withBasketStack { stack in
            let ana = try await stack.shopper("ana")
            let products = [try await stack.product(1), try await stack.product(7), try await stack.product(12)]
            var versions: [Int] = []
            versions.append(try await ana.add(1, count: 2).version)
            versions.append(try await ana.add(7).version)
            let basket = try await ana.add(12, count: 10)
            versions.append(basket.version)
            #expect(versions == [1, 2, 3])
            #expect(basket.items.map(\.productId) == [1, 7, 12])
            let expected = products[0].price.amount * 2 + products[1].price.amount + products[2].price.amount * 10
            #expect(basket.total == Money(amount: expected, currency: "USD"))
            #expect(basket.itemCount == 13)
            #expect(basket.items.map(\.lineTotal.amount).reduce(0, +) == expected)

            let item = try #require(basket.line(of: 7))
            #expect(try await ana.setCount(item.id, to: 3).version == 4)
            #expect(try await ana.remove(item.id).version == 5)
            #expect(try await ana.clear().version == 6)
            let cleared = try await ana.basket()
            #expect(cleared.items.isEmpty && cleared.total.amount == 0 && cleared.version == 6)
        }
    }

    @Test("Describe lists the six basket methods; the health check answers SERVING")
    func describeAndHealth() async throws {
        try await withBasketStack { stack in
            let options = CallOptions(timeout: .seconds(15))
            let health = try await stack.basketClient.unary(HealthContract.check, HealthCheckRequest(), options: options)
            #expect(health.status == .serving)
            let described = try await stack.basketClient.unary(MetaContract.describe, Empty(), options: options)
            let basket = try #require(described.services.first { $0.name == BasketContract.service })
            #expect(basket.methods.map(\.name) == BasketContract.all.map(\.method))
        }
    }
}
