import Contracts
import Foundation
import RPC
import Testing

@testable import shopctl

/// The layouts people read.
@Suite("HumanText: what people see")
struct HumanTextTests {
    private static let product = Product(
        id: 3, title: "Mens Cotton Jacket", description: "Great outerwear jackets for Spring.", category: "men's clothing",
        price: Money(amount: 5599, currency: "USD"), image: "https://example.com/3.jpg", rating: Rating(rate: 4.7, count: 500),
        stock: 12)

    @Test("a product list is an aligned table with prices in dollars")
    func productTable() {
        var cheap = Self.product
        cheap.id = 12
        cheap.title = "Tee"
        cheap.price = Money(amount: 999, currency: "USD")
        cheap.rating = Rating(rate: 3, count: 7)
        #expect(
            HumanText.products([Self.product, cheap]) == """
                ID  TITLE               CATEGORY         PRICE     RATING  STOCK
                 3  Mens Cotton Jacket  men's clothing  $55.99  4.7 (500)     12
                12  Tee                 men's clothing   $9.99    3.0 (7)     12
                """)
    }

    @Test("a product page says how many match and how to get the next page")
    func productPage() {
        let page = ListProductsResponse(products: [Self.product], nextPageToken: "tok", totalSize: 21)
        let text = HumanText.productPage(page, command: "shopctl products list --page-size 1")
        #expect(text.hasSuffix("1 of 21 products.\nMore: shopctl products list --page-size 1 --page-token tok"))
        #expect(HumanText.productPage(ListProductsResponse(products: [], totalSize: 0), command: "") == "No products match.")
    }

    @Test("one product shows every field, labels aligned")
    func productDetail() {
        #expect(
            HumanText.product(Self.product) == """
                #3 Mens Cotton Jacket
                Category:  men's clothing
                Price:     $55.99
                Rating:    4.7 (500)
                Stock:     12
                Image:     https://example.com/3.jpg

                  Great outerwear jackets for Spring.
                """)
    }

    @Test("the basket shows short item ids, counts and totals")
    func basket() {
        let item = BasketItem(
            id: "1a2b3c4d-5e6f-0000-0000-000000000000", productId: 3, productTitle: "Mens Cotton Jacket",
            unitPrice: Money(amount: 5599, currency: "USD"), imageURL: "", count: 2, lineTotal: Money(amount: 11198, currency: "USD"))
        let basket = Basket(items: [item], itemCount: 2, total: Money(amount: 11198, currency: "USD"), version: 4, updatedAt: "t")
        #expect(
            HumanText.basket(basket) == """
                ITEM      PRODUCT  TITLE                PRICE  COUNT    TOTAL
                1a2b3c4d        3  Mens Cotton Jacket  $55.99      2  $111.98
                2 items, total $111.98.
                """)
        #expect(HumanText.basketUpdate(basket).hasPrefix("--- version 4 at t\nITEM"))
        #expect(
            HumanText.basket(Basket(items: [], itemCount: 0, total: .zero(currency: "USD"), version: 0, updatedAt: ""))
                == "Your basket is empty.")
        // A basket that never changed has no time of its own (basket-svc sends the epoch).
        let untouched = Basket(items: [], itemCount: 0, total: .zero(currency: "USD"), version: 0, updatedAt: "1970-01-01T00:00:00.000Z")
        #expect(HumanText.basketUpdate(untouched) == "--- version 0\nYour basket is empty.")
    }

    @Test("the basket fits the width of the terminal the command runs in, cutting only the title")
    func basketFitsTerminal() {
        let item = BasketItem(
            id: "1a2b3c4d-5e6f-0000-0000-000000000000", productId: 3,
            productTitle: "Fjallraven 湯呑み Foldsack No. 1 Backpack, Fits 15 Laptops 🎒",
            unitPrice: Money(amount: 10995, currency: "USD"), imageURL: "", count: 2, lineTotal: Money(amount: 21990, currency: "USD"))
        let basket = Basket(items: [item], itemCount: 2, total: Money(amount: 21990, currency: "USD"), version: 4, updatedAt: "t")
        let narrow = ProcessContext(environment: [:], readStandardInput: { Data() }, writeStandardOutput: { _ in }, terminalColumns: 60)
        let text = ProcessContext.$current.withValue(narrow) { HumanText.basket(basket) }
        let rows = text.split(separator: "\n").dropLast().map(String.init)
        #expect(rows.allSatisfy { DisplayWidth.columns(of: $0) <= 60 }, "\(text)")
        #expect(rows[1].hasPrefix("1a2b3c4d        3  Fjallraven 湯"))
        #expect(rows[1].hasSuffix("…  $109.95      2  $219.90"), "\(text)")
        let wide = ProcessContext(environment: [:], readStandardInput: { Data() }, writeStandardOutput: { _ in })
        #expect(ProcessContext.$current.withValue(wide) { HumanText.basket(basket) }.contains("Fjallraven 湯呑み Foldsack No. 1"))
    }

    @Test("the product list fits the terminal width, cutting only titles")
    func productsFitTerminal() {
        let product = Product(
            id: 25, title: "Mens Casual Premium Slim Fit T-Shirts with a very long title indeed", description: "",
            category: "men's clothing", price: Money(amount: 2230, currency: "USD"), image: "",
            rating: Rating(rate: 4.1, count: 259), stock: 7)
        let narrow = ProcessContext(environment: [:], readStandardInput: { Data() }, writeStandardOutput: { _ in }, terminalColumns: 70)
        let text = ProcessContext.$current.withValue(narrow) { HumanText.products([product]) }
        let rows = text.split(separator: "\n").map(String.init).filter { $0.contains("Mens") }
        #expect(rows.count == 1 && rows.allSatisfy { DisplayWidth.columns(of: $0) <= 70 }, "\(text)")
        #expect(rows.first?.contains("…") == true && rows.first?.contains("men's clothing") == true, "\(text)")
    }

    @Test("an order shows status, card, address and lines")
    func order() {
        let order = Order(
            id: "o-1", status: .paid,
            items: [OrderItem(productId: 3, productTitle: "Jacket", unitPrice: Money(amount: 5599, currency: "USD"), count: 1,
                lineTotal: Money(amount: 5599, currency: "USD"))],
            total: Money(amount: 5599, currency: "USD"),
            shippingAddress: Address(name: "Ada", line1: "1 Main St", city: "Springfield", postalCode: "12345", country: "US"),
            payment: PaymentSummary(brand: "visa", last4: "4242"), createdAt: "2026-01-01T00:00:00Z",
            updatedAt: "2026-01-01T00:00:00Z")
        #expect(
            HumanText.order(order) == """
                Order o-1: PAID
                Placed:   2026-01-01T00:00:00Z
                Total:    $55.99
                Card:     visa ending in 4242
                Ship to:  Ada, 1 Main St, Springfield 12345, US

                PRODUCT  TITLE    PRICE  COUNT   TOTAL
                      3  Jacket  $55.99      1  $55.99
                """)
    }

    @Test("call's human output is indented JSON with sorted keys")
    func prettyJSON() {
        let text = PrettyJSON.format(Data(#"{"b":[1,2.5,"x\n"],"a":{"t":true,"n":null},"e":{},"l":[]}"#.utf8))
        #expect(
            text == """
                {
                  "a": {
                    "n": null,
                    "t": true
                  },
                  "b": [
                    1,
                    2.5,
                    "x\\n"
                  ],
                  "e": {},
                  "l": []
                }
                """)
        #expect(PrettyJSON.format(Data("not json".utf8)) == "not json")
    }

    @Test("describe lists each service's methods with kind, auth and fields")
    func describe() {
        let services = DescribeResponse(methods: [CatalogContract.getProduct.info, CatalogContract.addFavorite.info]).services
        #expect(
            DescribeCommand.render(services) == """
                shop.catalog.v1.CatalogService
                  METHOD       KIND   AUTH  RETRY
                  GetProduct   UNARY  NONE  idempotent
                  AddFavorite  UNARY  USER  idempotent
                  GetProduct({id: Int}) -> {product: Product}
                  AddFavorite({productId: Int}) -> {}
                """)
    }
}
