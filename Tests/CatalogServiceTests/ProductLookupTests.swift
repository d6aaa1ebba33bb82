import Contracts
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// `GetProduct` and `BatchGetProducts` (API.md §4, README "Choices"): one product or
/// `PRODUCT_NOT_FOUND`; up to 100 ids answered in the order asked, duplicates once, unknown
/// ids in `missingIds`.
@Suite("GetProduct and BatchGetProducts")
struct ProductLookupTests {
    /// Asks for `ids` in one `BatchGetProducts`.
    static func batch(_ stack: CatalogStack, _ ids: [Int]) async throws -> BatchGetProductsResponse {
        try await stack.catalogClient.unary(CatalogContract.batchGetProducts, BatchGetProductsRequest(ids: ids), options: stack.plain())
    }

    @Test("GetProduct answers each listed product exactly as ListProducts shows it")
    func getEveryProduct() async throws {
        try await withCatalogService { stack in
            for listed in try await stack.allProducts() {
                #expect(try await stack.product(listed.id) == listed)
            }
        }
    }

    @Test("GetProduct of an id no product has is NOT_FOUND PRODUCT_NOT_FOUND", arguments: [999_999, Int(Int32.max), Int.max])
    func getUnknown(id: Int) async throws {
        try await withCatalogService { stack in
            await expectRPCError(CatalogReason.productNotFound) { try await stack.product(id) }
        }
    }

    @Test("GetProduct of a deleted product is PRODUCT_NOT_FOUND")
    func getDeleted() async throws {
        try await withCatalogService { stack in
            let product = try await stack.upsert(SampleProducts.make("Short-lived kettle"))
            try await stack.delete(product.id)
            await expectRPCError(CatalogReason.productNotFound) { try await stack.product(product.id) }
        }
    }

    @Test("BatchGetProducts answers in the order asked, each product once, and lists unknown ids")
    func batchOrder() async throws {
        try await withCatalogService { stack in
            let ids = try await stack.allProducts().map(\.id)
            try #require(ids.count >= 5)
            let asked = [ids[4], 888_888, ids[0], ids[2], ids[4], 777_777, ids[0], 888_888]
            let response = try await Self.batch(stack, asked)
            #expect(response.products.map(\.id) == [ids[4], ids[0], ids[2]])
            #expect(Set(response.missingIds) == [888_888, 777_777])
            for product in response.products {
                #expect(try await stack.product(product.id) == product)
            }
        }
    }

    @Test("BatchGetProducts of no ids answers no products and no missing ids")
    func batchEmpty() async throws {
        try await withCatalogService { stack in
            let response = try await Self.batch(stack, [])
            #expect(response.products.isEmpty && response.missingIds.isEmpty)
        }
    }

    @Test("BatchGetProducts takes 100 ids")
    func batchOfHundred() async throws {
        try await withCatalogService { stack in
            let known = try await stack.allProducts().map(\.id)
            let unknown = (1...(100 - known.count)).map { 500_000 + $0 }
            let response = try await Self.batch(stack, known.reversed() + unknown)
            #expect(response.products.map(\.id) == known.reversed())
            #expect(Set(response.missingIds) == Set(unknown))
        }
    }

    @Test("BatchGetProducts of 101 ids is INVALID_ARGUMENT naming ids", arguments: [101, 1_000])
    func batchTooMany(count: Int) async throws {
        try await withCatalogService { stack in
            let error = await expectRPCError(.invalidArgument, reason: nil) {
                try await Self.batch(stack, Array(1...count))
            }
            #expect(error?.namesField("ids") == true, "\(error?.violatedFields ?? [])")
        }
    }

    @Test("BatchGetProducts lists a deleted product as missing")
    func batchDeleted() async throws {
        try await withCatalogService { stack in
            let kept = try await stack.upsert(SampleProducts.make("Kept teapot"))
            let gone = try await stack.upsert(SampleProducts.make("Gone teapot"))
            try await stack.delete(gone.id)
            let response = try await Self.batch(stack, [gone.id, kept.id])
            #expect(response.products == [kept])
            #expect(response.missingIds == [gone.id])
        }
    }
}
