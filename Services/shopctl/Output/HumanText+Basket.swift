import Contracts

extension HumanText {
    /// How many characters of an item id the basket table shows; `basket set` and `remove`
    /// accept any unique prefix.
    static let itemIDPrefix = 8

    /// The basket: one row per line, then the count and total.
    static func basket(_ basket: Basket) -> String {
        guard !basket.items.isEmpty else { return "Your basket is empty." }
        var table = Table([
            .init("ITEM"), .init("PRODUCT", .right), .init("TITLE", shrinks: true), .init("PRICE", .right),
            .init("COUNT", .right), .init("TOTAL", .right),
        ])
        for item in basket.items {
            table.append([
                String(item.id.prefix(itemIDPrefix)), String(item.productId), Table.truncate(item.productTitle, to: 40),
                MoneyText.format(item.unitPrice), String(item.count), MoneyText.format(item.lineTotal),
            ])
        }
        return table.render() + "\n" + count(basket.itemCount, "item") + ", total " + MoneyText.format(basket.total) + "."
    }

    /// One update of `basket watch`: when and which version, then the basket. A basket that
    /// never changed (version 0) has no time of its own (basket-svc says 1970): none is shown.
    static func basketUpdate(_ basket: Basket) -> String {
        let when = basket.version == 0 ? "" : " at \(basket.updatedAt)"
        return "--- version \(basket.version)\(when)\n" + self.basket(basket)
    }
}
