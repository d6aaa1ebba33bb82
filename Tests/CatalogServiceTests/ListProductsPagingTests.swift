import Contracts
import RPC
import ServiceTestSupport
import Testing

/// `ListProducts` paging (API.md §2 and §4, README "Choices"): page sizes, walking every page,
/// signed page tokens bound to their filters, and keyset paging that stays correct while
/// products change.
@Suite("ListProducts paging")
struct ListProductsPagingTests {
    /// `count` products priced 10.00, 10.10, 10.20 … so that every order is unambiguous.
    static func catalog(_ count: Int) -> [Product] {
        (0..<count).map { index in
            SampleProducts.make("Pager item \(index)", category: index.isMultiple(of: 2) ? "even" : "odd", price: 1_000 + 10 * index)
        }
    }

    @Test("without pageSize, or with 0, a page holds 20 products and names the next page", arguments: [nil, 0] as [Int?])
    func defaultPageSize(pageSize: Int?) async throws {
        try await withCatalogService(seeded: false) { stack in
            try await stack.importProducts(Self.catalog(45))
            let first = try await stack.listProducts(ListProductsRequest(pageSize: pageSize))
            #expect(first.products.count == 20)
            #expect(first.totalSize == 45)
            #expect(!first.nextPageToken.isEmpty)
        }
    }

    @Test("a pageSize above 100 is served as 100", arguments: [101, 150, 1_000_000, Int.max])
    func cappedPageSize(pageSize: Int) async throws {
        try await withCatalogService(seeded: false) { stack in
            try await stack.importProducts(Self.catalog(130))
            let first = try await stack.listProducts(ListProductsRequest(pageSize: pageSize))
            #expect(first.products.count == 100)
            #expect(first.totalSize == 130)
            let second = try await stack.listProducts(ListProductsRequest(pageSize: pageSize, pageToken: first.nextPageToken))
            #expect(second.products.count == 30 && second.nextPageToken.isEmpty)
        }
    }

    @Test("a negative pageSize is INVALID_ARGUMENT naming pageSize", arguments: [-1, -20, Int(Int32.min)])
    func negativePageSize(pageSize: Int) async throws {
        try await withCatalogService { stack in
            let error = await expectRPCError(.invalidArgument, reason: nil) {
                try await stack.listProducts(ListProductsRequest(pageSize: pageSize))
            }
            #expect(error?.namesField("pageSize") == true, "\(error?.violatedFields ?? [])")
        }
    }

    @Test("walking every page yields each product once, in id order, with the same totalSize", arguments: [1, 3, 7, 24, 100])
    func walkEveryPage(pageSize: Int) async throws {
        try await withCatalogService { stack in
            let total = try await stack.listProducts().totalSize
            var request = ListProductsRequest(pageSize: pageSize)
            var ids: [Int] = []
            for _ in 0...(total + 1) {
                let page = try await stack.listProducts(request)
                #expect(page.totalSize == total)
                #expect(page.products.count <= pageSize)
                ids += page.products.map(\.id)
                if page.nextPageToken.isEmpty { break }
                #expect(ids.count < total, "the page that served the last product still named a next page")
                request.pageToken = page.nextPageToken
            }
            #expect(ids.count == total)
            #expect(ids == ids.sorted() && Set(ids).count == ids.count)
        }
    }

    @Test("an empty result is one page with no next-page token")
    func emptyResult() async throws {
        try await withCatalogService { stack in
            let page = try await stack.listProducts(ListProductsRequest(category: "no such category"))
            #expect(page.products.isEmpty && page.nextPageToken.isEmpty && page.totalSize == 0)
        }
    }

    @Test("a page token may be followed with another pageSize")
    func pageSizeMayChange() async throws {
        try await withCatalogService { stack in
            let everything = try await stack.allProducts()
            let first = try await stack.listProducts(ListProductsRequest(pageSize: 5))
            let rest = try await stack.listProducts(ListProductsRequest(pageSize: 100, pageToken: first.nextPageToken))
            #expect((first.products + rest.products).map(\.id) == everything.map(\.id))
        }
    }

    @Test("products added or deleted between pages are neither repeated nor skipped among the rest", arguments: [
        ProductSort.relevance, .priceAscending, .priceDescending,
    ])
    func pagingWhileProductsChange(sort: ProductSort) async throws {
        try await withCatalogService(seeded: false) { stack in
            try await stack.importProducts(Self.catalog(30))
            let original = try await stack.allProducts(ListProductsRequest(sort: sort))
            let first = try await stack.listProducts(ListProductsRequest(sort: sort, pageSize: 10))
            #expect(first.products == Array(original.prefix(10)))

            // Delete one product already served, the last one served (the position reached) and
            // one not yet served; add one that sorts before the position and one after it.
            let deletedSeen = [original[3].id, original[9].id]
            let deletedUnseen = original[20].id
            for id in deletedSeen + [deletedUnseen] { try await stack.delete(id) }
            try await stack.upsert(SampleProducts.make("Pager newcomer cheap", price: 1))
            try await stack.upsert(SampleProducts.make("Pager newcomer dear", price: 999_999))

            let rest = try await stack.allProducts(ListProductsRequest(sort: sort, pageToken: first.nextPageToken), pageSize: 10)
            let served = (first.products + rest).map(\.id)
            #expect(Set(served).count == served.count, "no product is served twice: \(served)")
            let survivors = original.map(\.id).filter { !deletedSeen.contains($0) && $0 != deletedUnseen }
            let skipped = survivors.filter { !served.contains($0) }
            #expect(skipped.isEmpty, "products present throughout were skipped: \(skipped)")
            #expect(!rest.map(\.id).contains(deletedUnseen), "a product deleted before its page was still served")
        }
    }
}
