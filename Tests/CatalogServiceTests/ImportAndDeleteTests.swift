import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing

/// `ImportProducts` and `DeleteProduct` (API.md §4, README "Choices"): a stream of thousands
/// of products upserted with a per-item failure list instead of an abort; a deleted product
/// is gone everywhere, and deleting it again is `PRODUCT_NOT_FOUND`.
@Suite("ImportProducts and DeleteProduct")
struct ImportAndDeleteTests {
    /// The stream positions of the invalid products, around the 500-product batch boundaries.
    static let invalidIndices = [0, 7, 499, 500, 1_234, 1_999]

    @Test("importing 2,000 products with a few invalid ones reports created, updated and the failed indices")
    func importTwoThousand() async throws {
        try await withCatalogService { stack in
            let seed = try await stack.allProducts()
            let replaced = Array(seed.prefix(5))
            var stream = (0..<2_000).map { index in
                SampleProducts.make(
                    "Importium gadget \(index)", category: index.isMultiple(of: 3) ? "imported tools" : "imported toys",
                    price: 100 + index)
            }
            for (offset, original) in replaced.enumerated() {
                var update = original
                update.title = "Updated \(original.title)"
                stream[10 + offset] = update
            }
            for index in Self.invalidIndices {
                stream[index].price.currency = "dollars"
            }

            let response = try await stack.importProducts(stream)
            #expect(response.failed.map(\.index).sorted() == Self.invalidIndices)
            #expect(response.failed.allSatisfy { !$0.reason.isEmpty })
            #expect(response.updated == replaced.count)
            #expect(response.created == 2_000 - Self.invalidIndices.count - replaced.count)

            #expect(try await stack.listProducts().totalSize == seed.count + response.created)
            for original in replaced {
                #expect(try await stack.product(original.id).title == "Updated \(original.title)")
            }
            let found = try await stack.listProducts(ListProductsRequest(query: "importium"))
            #expect(found.totalSize == response.created)
            let categories = try await stack.categories()
            let imported = categories.filter { $0.name.hasPrefix("imported") }.map(\.productCount).reduce(0, +)
            #expect(imported == response.created)
        }
    }

    @Test("an import creates under a chosen new id, and a later message with that id updates it")
    func chosenIDs() async throws {
        try await withCatalogService { stack in
            var first = SampleProducts.make("Chosen first")
            first.id = 90_000
            var second = SampleProducts.make("Chosen second")
            second.id = 90_000
            let response = try await stack.importProducts([first, second, SampleProducts.make("Unchosen")])
            #expect(response == ImportProductsResponse(created: 2, updated: 1, failed: []))
            #expect(try await stack.product(90_000) == second)
        }
    }

    @Test("a message that is not a product (not JSON, a field of the wrong type) fails at its index; the products around it are imported")
    func undecodableMessages() async throws {
        try await withCatalogService { stack in
            let before = try await stack.allProducts().count
            let product = { (title: String) in try JSONCodec.shared.encode(ImportProductsRequest(product: SampleProducts.make(title))) }
            let response = try await stack.importRawMessages([
                try product("Before the noise"), Data("not json".utf8), Data(#"{"product": {"title": 5}}"#.utf8),
                try product("After the noise"),
            ])
            #expect(response.created == 2)
            #expect(response.failed.map(\.index) == [1, 2])
            #expect(response.failed.allSatisfy { !$0.reason.isEmpty }, "\(response.failed)")
            #expect(try await stack.allProducts().count == before + 2)
        }
    }

    @Test("an empty import stream creates and updates nothing")
    func emptyImport() async throws {
        try await withCatalogService { stack in
            let response = try await stack.importProducts([])
            #expect(response == ImportProductsResponse(created: 0, updated: 0, failed: []))
        }
    }

    @Test("an import whose every product is invalid fails each one and stores nothing")
    func allInvalid() async throws {
        try await withCatalogService { stack in
            let before = try await stack.allProducts()
            var broken = SampleProducts.numbered("Broken", count: 3)
            broken[0].title = ""
            broken[1].stock = -1
            broken[2].rating.rate = 9
            let response = try await stack.importProducts(broken)
            #expect(response.created == 0 && response.updated == 0)
            #expect(response.failed.map(\.index).sorted() == [0, 1, 2])
            #expect(try await stack.allProducts() == before)
        }
    }

    @Test("a deleted product is gone from GetProduct, ListProducts, search and the category counts")
    func delete() async throws {
        try await withCatalogService { stack in
            let product = try await stack.upsert(SampleProducts.make("Vanishing umbrella", category: "rainwear"))
            let total = try await stack.listProducts().totalSize
            try await stack.delete(product.id)
            await expectRPCError(CatalogReason.productNotFound) { try await stack.product(product.id) }
            #expect(try await stack.listProducts().totalSize == total - 1)
            #expect(try await !stack.allProducts().map(\.id).contains(product.id))
            #expect(try await stack.listProducts(ListProductsRequest(query: "vanishing")).totalSize == 0)
            #expect(try await !stack.categories().map(\.name).contains("rainwear"))
        }
    }

    @Test("deleting a deleted or unknown product is NOT_FOUND PRODUCT_NOT_FOUND")
    func deleteUnknown() async throws {
        try await withCatalogService { stack in
            let product = try await stack.upsert(SampleProducts.make("Once-only kite"))
            try await stack.delete(product.id)
            await expectRPCError(CatalogReason.productNotFound) { try await stack.delete(product.id) }
            await expectRPCError(CatalogReason.productNotFound) { try await stack.delete(999_999) }
        }
    }

    @Test("a deleted id is not given to a new product")
    func deletedIDNotReused() async throws {
        try await withCatalogService { stack in
            let first = try await stack.upsert(SampleProducts.make("First clock"))
            try await stack.delete(first.id)
            let second = try await stack.upsert(SampleProducts.make("Second clock"))
            #expect(second.id != first.id)
        }
    }
}
