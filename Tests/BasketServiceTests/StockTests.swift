import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing
import JSON

/// Stock as a hint for the shopper (API.md §5): `AddItem` and raising a count refuse more than
/// the catalog has, saying how many are left; a product gone from the catalog is refused.
@Suite("Stock checks")
struct StockTests {
    /// The `OUT_OF_STOCK` details of `productId` with `available` left.
    static func shortage(_ productId: Int, available: Int) -> JSONValue {
        .object(["productId": .number(Double(productId)), "available": .number(Double(available))])
    }

    @Test("AddItem above the stock is FAILED_PRECONDITION OUT_OF_STOCK saying how many are left; the whole stock is fine")
    func addAboveStock() async throws {
        try await withBasketStack { stack in
            let ana = try await stack.shopper("ana")
            let scarce = try await stack.createProduct(title: "Scarce teapot", stock: 7)
            let error = await expectRPCError(BasketReason.outOfStock) { try await ana.add(scarce.id, count: 10) }
            #expect(error?.message == "Only 7 of product \(scarce.id) are left.")
            #expect(error?.details == Self.shortage(scarce.id, available: 7))
            #expect(try await ana.basket().version == 0, "a refused AddItem changes nothing")
            #expect(try await ana.add(scarce.id, count: 7).line(of: scarce.id)?.count == 7)

            let last = try await stack.createProduct(title: "Last teapot", stock: 1)
            let one = await expectRPCError(BasketReason.outOfStock) { try await ana.add(last.id, count: 2) }
            #expect(one?.message == "Only 1 of product \(last.id) is left.")
        }
    }

    @Test("AddItem of a sold-out product is OUT_OF_STOCK with available 0")
    func addSoldOut() async throws {
        try await withBasketStack { stack in
            let ana = try await stack.shopper("ana")
            let soldOut = try await stack.createProduct(title: "Sold-out kettle", stock: 0)
            let error = await expectRPCError(BasketReason.outOfStock) { try await ana.add(soldOut.id) }
            #expect(error?.message == "Product \(soldOut.id) is sold out.")
            #expect(error?.details == Self.shortage(soldOut.id, available: 0))
            #expect(try await ana.basket().items.isEmpty)
        }
    }

    @Test("AddItem of a product deleted from the catalog is NOT_FOUND PRODUCT_NOT_FOUND")
    func addDeleted() async throws {
        try await withBasketStack { stack in
            let ana = try await stack.shopper("ana")
            let gone = try await stack.createProduct(title: "Discontinued mug")
            try await stack.deleteProduct(gone.id)
            await expectRPCError(BasketReason.productNotFound) { try await ana.add(gone.id) }
            #expect(try await ana.basket().version == 0)
        }
    }

    @Test("raising a count above the stock is OUT_OF_STOCK; up to the stock, and lowering below a fallen stock, are fine")
    func raiseAboveStock() async throws {
        try await withBasketStack { stack in
            let ana = try await stack.shopper("ana")
            var product = try await stack.createProduct(title: "Small batch honey", stock: 5)
            let item = try #require(try await ana.add(product.id, count: 2).line(of: product.id))

            let error = await expectRPCError(BasketReason.outOfStock) { try await ana.setCount(item.id, to: 6) }
            #expect(error?.message == "Only 5 of product \(product.id) are left.")
            #expect(error?.details == Self.shortage(product.id, available: 5))
            #expect(try await ana.basket().line(of: product.id)?.count == 2, "a refused change changes nothing")
            #expect(try await ana.setCount(item.id, to: 5).line(of: product.id)?.count == 5)

            // The stock falls below the line: lowering the count is no raise, so it is not refused.
            product.stock = 1
            try await stack.upsert(product)
            #expect(try await ana.setCount(item.id, to: 3).line(of: product.id)?.count == 3)
            await expectRPCError(BasketReason.outOfStock) { try await ana.setCount(item.id, to: 4) }
        }
    }

    @Test("raising the count of a line whose product was deleted is PRODUCT_NOT_FOUND; lowering and removing it work")
    func raiseDeleted() async throws {
        try await withBasketStack { stack in
            let ana = try await stack.shopper("ana")
            let gone = try await stack.createProduct(title: "Retired lamp")
            let item = try #require(try await ana.add(gone.id, count: 3).line(of: gone.id))
            try await stack.deleteProduct(gone.id)

            await expectRPCError(BasketReason.productNotFound) { try await ana.setCount(item.id, to: 4) }
            #expect(try await ana.setCount(item.id, to: 1).line(of: gone.id)?.count == 1)
            #expect(try await ana.setCount(item.id, to: 0).items.isEmpty)
        }
    }
}
