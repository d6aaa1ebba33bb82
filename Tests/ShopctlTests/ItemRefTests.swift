import Contracts
import Testing

@testable import shopctl

/// `basket set` and `basket remove` name a line by its product id or by its item id.
@Suite("basket lines by product id or item id")
struct ItemRefTests {
    /// A line of product `product` with item id `id`.
    private static func line(_ id: String, product: Int) -> BasketItem {
        BasketItem(
            id: id, productId: product, productTitle: "T", unitPrice: .zero(currency: "USD"), imageURL: "", count: 1,
            lineTotal: .zero(currency: "USD"))
    }

    private static let basket = Basket(
        items: [
            line("1a2b3c4d-0000-4000-8000-000000000001", product: 2),
            line("12345678-0000-4000-8000-000000000002", product: 25),
            line("1a2bffff-0000-4000-8000-000000000003", product: 12345678),
        ],
        itemCount: 3, total: .zero(currency: "USD"), version: 1, updatedAt: "")

    @Test("a whole number is the product of a line")
    func productIDs() throws {
        #expect(try BasketCommand.matchItem("2", in: Self.basket) == "1a2b3c4d-0000-4000-8000-000000000001")
        #expect(try BasketCommand.matchItem("25", in: Self.basket) == "12345678-0000-4000-8000-000000000002")
        // A product id wins over an item id that starts with the same digits.
        #expect(try BasketCommand.matchItem("12345678", in: Self.basket) == "1a2bffff-0000-4000-8000-000000000003")
    }

    @Test("a product not in the basket is ITEM_NOT_FOUND naming the product and `basket add`")
    func productNotInBasket() {
        let error = #expect(throws: ShopctlError.self) { try BasketCommand.matchItem("3", in: Self.basket) }
        #expect(error?.reason == "ITEM_NOT_FOUND")
        #expect(error?.status == .rejected)
        #expect(error?.message == "Product 3 is not in your basket.")
        #expect(error?.hint?.contains("shopctl basket add 3") == true)
    }

    @Test("an item id cut as `basket show` prints it may be all digits, and still names its line")
    func numericItemPrefix() throws {
        var basket = Self.basket
        basket.items.removeLast()
        #expect(try BasketCommand.matchItem("12345678", in: basket) == "12345678-0000-4000-8000-000000000002")
    }

    @Test("an item id prefix in any case; an ambiguous one lists the item ids it matches")
    func itemPrefixes() throws {
        #expect(try BasketCommand.matchItem("1A2B3", in: Self.basket) == "1a2b3c4d-0000-4000-8000-000000000001")
        let ambiguous = #expect(throws: ShopctlError.self) { try BasketCommand.matchItem("1a2b", in: Self.basket) }
        #expect(ambiguous?.status == .usage)
        #expect(ambiguous?.message.contains("1a2b3c4d-0000-4000-8000-000000000001") == true)
        #expect(ambiguous?.message.contains("1a2bffff-0000-4000-8000-000000000003") == true)
    }
}
