import Contracts
import Foundation
import Logging
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

@testable import shopctl

/// `products list` when nothing matches: the service's spelling suggestion with the command
/// that runs it, and a category the catalog does not have named as such, with the closest one.
/// The real `shopctl` executable against a fake gateway (our `Router` + `HTTP2Server` on a
/// loopback port, in this process), so no service has to run.
@Suite("products list: did you mean …?")
struct ProductSearchOutputTests {
    /// The fake catalog's categories.
    private static let categories = ["electronics", "jewelery", "men's clothing", "women's clothing"]

    /// The one product the fake catalog has.
    private static let headphones = Product(
        id: 2, title: "Pulse Wireless Headphones", description: "Over-ear.", category: "electronics",
        price: Money(amount: 12_999, currency: "USD"), image: "", rating: Rating(rate: 4.5, count: 10), stock: 3)

    /// Serves a fake gateway whose catalog has ``headphones`` in "electronics" and the
    /// ``categories``, and answers the query "headphnes" with the suggestion "headphones" (and
    /// "wireless headphnes" with "wireless headphones"); runs `body` with a runner pointed at it.
    private func withFakeGateway(_ body: (ShopctlRunner) async throws -> Void) async throws {
        var router = Router()
        router.unary(CatalogContract.listProducts) { request, _ in
            let category = request.category.map { $0.lowercased() }
            let query = request.query?.lowercased()
            let inCategory = category == nil || category == "electronics"
            let matches = inCategory && (query == nil || Self.headphones.title.lowercased().contains(query ?? ""))
            let suggestion = matches ? nil : query.map { $0.replacingOccurrences(of: "headphnes", with: "headphones") }
            return ListProductsResponse(
                products: matches ? [Self.headphones] : [], totalSize: matches ? 1 : 0,
                suggestion: suggestion == query ? nil : suggestion)
        }
        router.unary(CatalogContract.listCategories) { _, _ in
            ListCategoriesResponse(categories: Self.categories.map { Category(name: $0, productCount: 1) })
        }
        try await serveFakeGateway(router, name: "product-search", body)
    }

    @Test("a search that finds nothing prints the suggestion and the command that runs it, exit 0")
    func suggestion() async throws {
        try await withFakeGateway { shopctl in
            let typo = try await shopctl.succeed(["products", "list", "--search", "headphnes"])
            #expect(
                typo.output == "No products match. Did you mean `headphones`? shopctl products list --search headphones\n",
                "\(typo)")
            let kept = try await shopctl.succeed([
                "products", "list", "--category", "electronics", "--search", "wireless headphnes", "--sort", "price_asc",
                "--page-size", "5",
            ])
            #expect(
                kept.output == "No products match. Did you mean `wireless headphones`? shopctl products list "
                    + "--category electronics --search 'wireless headphones' --sort PRICE_ASC --page-size 5\n",
                "\(kept)")
            let json = try await shopctl.succeed(["--json", "products", "list", "--search", "headphnes"])
            #expect(try ShopctlJSON.decode(ListProductsResponse.self, json.output).suggestion == "headphones")
            let none = try await shopctl.succeed(["products", "list", "--search", "zebra"])
            #expect(none.output == "No products match.\n", "\(none)")
        }
    }

    @Test("a category the catalog does not have is refused, exit 4, naming the closest")
    func unknownCategory() async throws {
        try await withFakeGateway { shopctl in
            let typo = try await shopctl.run(["products", "list", "--category", "jewelry"])
            #expect(typo.status == 4, "\(typo)")
            #expect(typo.output.isEmpty, "\(typo)")
            #expect(
                typo.errors == "error: UNKNOWN_CATEGORY: No category 'jewelry'. Did you mean 'jewelery'? "
                    + "(run `shopctl products list --category jewelery`)\n",
                "\(typo)")
            let spaced = try await shopctl.run(["products", "list", "--category", "mens clothing", "--search", "shirt"])
            #expect(spaced.status == 4, "\(spaced)")
            #expect(
                spaced.errors.contains(
                    #"Did you mean 'men's clothing'? (run `shopctl products list --category 'men'\''s clothing' --search shirt`)"#),
                "\(spaced)")
            let far = try await shopctl.run(["products", "list", "--category", "toys"])
            #expect(far.status == 4, "\(far)")
            #expect(far.errors == "error: UNKNOWN_CATEGORY: No category 'toys'. (see `shopctl categories`)\n", "\(far)")
        }
    }

    @Test("a known category that matches nothing, in any letter case, is not an error")
    func knownCategory() async throws {
        try await withFakeGateway { shopctl in
            let empty = try await shopctl.succeed(["products", "list", "--category", "JEWELERY"])
            #expect(empty.output == "No products match.\n", "\(empty)")
            let found = try await shopctl.succeed(["products", "list", "--category", "Electronics"])
            #expect(found.output.contains("Pulse Wireless Headphones"), "\(found)")
        }
    }

    @Test("the page text shows a suggestion, with the command when one is given")
    func pageText() {
        let page = ListProductsResponse(products: [], totalSize: 0, suggestion: "headphones")
        #expect(HumanText.productPage(page, command: "") == "No products match. Did you mean `headphones`?")
        #expect(
            HumanText.productPage(page, command: "", searching: { "shopctl products list --search \($0)" })
                == "No products match. Did you mean `headphones`? shopctl products list --search headphones")
    }
}
