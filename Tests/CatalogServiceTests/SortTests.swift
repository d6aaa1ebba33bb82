import Contracts
import ServiceTestSupport
import Testing

/// `ListProducts` `sort` (API.md §4, README "Choices"): `PRICE_ASC`, `PRICE_DESC` and `RATING`
/// (rate, then count, both descending), every one breaking ties by id, across page boundaries.
@Suite("Sort orders")
struct SortTests {
    /// A sort and whether two neighbouring products are in its order.
    struct Order: Sendable, CustomTestStringConvertible {
        /// The sort requested.
        var sort: ProductSort
        /// Whether `first` may come right before `second` in this order.
        var inOrder: @Sendable (Product, Product) -> Bool
        var testDescription: String { sort.rawValue }

        /// Every sort, RELEVANCE without a query included.
        static let all = [
            Order(sort: .priceAscending) { first, second in
                (first.price.amount, first.id) < (second.price.amount, second.id)
            },
            Order(sort: .priceDescending) { first, second in
                first.price.amount != second.price.amount ? first.price.amount > second.price.amount : first.id < second.id
            },
            Order(sort: .rating) { first, second in
                if first.rating.rate != second.rating.rate { return first.rating.rate > second.rating.rate }
                if first.rating.count != second.rating.count { return first.rating.count > second.rating.count }
                return first.id < second.id
            },
            Order(sort: .relevance) { first, second in first.id < second.id },
        ]
    }

    /// Products that tie with each other on price and on rating, so the tie-breaks show.
    static let ties = [
        SampleProducts.make("Tie alpha", price: 1_234, rate: 3.5, ratingCount: 40),
        SampleProducts.make("Tie beta", price: 1_234, rate: 3.5, ratingCount: 40),
        SampleProducts.make("Tie gamma", price: 1_234, rate: 3.5, ratingCount: 90),
        SampleProducts.make("Tie delta", price: 99, rate: 5, ratingCount: 1),
        SampleProducts.make("Tie epsilon", price: 0, rate: 0, ratingCount: 0),
    ]

    @Test("every page of a sorted listing is in order, ties broken by id", arguments: Order.all)
    func sorted(order: Order) async throws {
        try await withCatalogService { stack in
            try await stack.importProducts(Self.ties)
            let products = try await stack.allProducts(ListProductsRequest(sort: order.sort), pageSize: 4)
            #expect(products.count == (try await stack.listProducts().totalSize))
            for (first, second) in zip(products, products.dropFirst()) {
                #expect(order.inOrder(first, second), "\(first.id) \(first.price.amount) \(first.rating) before \(second.id) \(second.price.amount) \(second.rating)")
            }
        }
    }

    @Test("products tied on the sort key page in id order, none repeated or skipped", arguments: [
        ProductSort.priceAscending, .priceDescending, .rating,
    ])
    func tiesAcrossPages(sort: ProductSort) async throws {
        try await withCatalogService(seeded: false) { stack in
            let created = try await stack.importProducts(
                (0..<11).map { SampleProducts.make("Twin \($0)", price: 700, rate: 4.5, ratingCount: 12) })
            #expect(created.created == 11)
            let everything = try await stack.allProducts()
            let paged = try await stack.allProducts(ListProductsRequest(sort: sort), pageSize: 3)
            #expect(paged.map(\.id) == everything.map(\.id).sorted())
        }
    }

    @Test("a sort within a category keeps to the category")
    func sortedCategory() async throws {
        try await withCatalogService { stack in
            let products = try await stack.allProducts(ListProductsRequest(category: "jewelery", sort: .priceDescending), pageSize: 2)
            let expected = try await stack.allProducts().filter { $0.category == "jewelery" }
                .sorted { $0.price.amount != $1.price.amount ? $0.price.amount > $1.price.amount : $0.id < $1.id }
            #expect(!expected.isEmpty)
            #expect(products.map(\.id) == expected.map(\.id))
        }
    }

    @Test("without a sort the listing is RELEVANCE: with no query, by id")
    func defaultSort() async throws {
        try await withCatalogService { stack in
            let implicit = try await stack.allProducts(pageSize: 7)
            let explicit = try await stack.allProducts(ListProductsRequest(sort: .relevance), pageSize: 7)
            #expect(implicit == explicit)
            #expect(implicit.map(\.id) == implicit.map(\.id).sorted())
        }
    }
}
