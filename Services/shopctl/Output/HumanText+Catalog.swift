import Contracts

extension HumanText {
    /// Products as a table: id, title, category, price, rating, stock.
    static func products(_ products: [Product]) -> String {
        var table = Table([
            .init("ID", .right), .init("TITLE", shrinks: true), .init("CATEGORY"), .init("PRICE", .right), .init("RATING", .right),
            .init("STOCK", .right),
        ])
        for product in products {
            table.append([
                String(product.id), Table.truncate(product.title, to: 44), product.category,
                MoneyText.format(product.price), rating(product.rating.rate, count: product.rating.count),
                String(product.stock),
            ])
        }
        return table.render()
    }

    /// A page of `ListProducts`: the table, how many match, and how to get the next page; for
    /// a search that found nothing, the service's corrected query, with the command that runs
    /// it when `searching` makes one (it is given the corrected query).
    static func productPage(
        _ page: ListProductsResponse, command: String, searching: ((String) -> String)? = nil
    ) -> String {
        guard !page.products.isEmpty else {
            guard let suggestion = page.suggestion, !suggestion.isEmpty else { return "No products match." }
            let retry = searching.map { " " + $0(suggestion) } ?? ""
            return "No products match. Did you mean `\(suggestion)`?" + retry
        }
        var text = products(page.products)
        text += "\n\(page.products.count) of \(count(page.totalSize, "product"))."
        if let next = nextPage(page.nextPageToken, command: command) { text += "\n" + next }
        return text
    }

    /// One product in full.
    static func product(_ product: Product) -> String {
        var text = "#\(product.id) \(product.title)\n"
        text += fields([
            ("Category", product.category),
            ("Price", MoneyText.format(product.price)),
            ("Rating", rating(product.rating.rate, count: product.rating.count)),
            ("Stock", product.stock > 0 ? String(product.stock) : "out of stock"),
            ("Image", product.image),
        ])
        if !product.description.isEmpty { text += "\n\n" + wrap(product.description) }
        return text
    }

    /// The categories and how many products each lists.
    static func categories(_ categories: [Category]) -> String {
        guard !categories.isEmpty else { return "No categories." }
        var table = Table([.init("CATEGORY"), .init("PRODUCTS", .right)])
        for category in categories { table.append([category.name, String(category.productCount)]) }
        return table.render()
    }

    /// A page of favorites, and how to get the next page (`command` with its page token).
    static func favorites(_ page: ListFavoritesResponse, command: String) -> String {
        guard !page.products.isEmpty else { return "No favorites yet. Add one with `shopctl favorites add PRODUCT`." }
        var text = products(page.products)
        if let next = nextPage(page.nextPageToken, command: command) { text += "\n" + next }
        return text
    }

    /// The result of an import: counts, then each failure, by its place in the file (the
    /// service numbers them from 0; `--json` shows its `index`).
    static func importResult(_ result: ImportProductsResponse) -> String {
        var text = "Created \(result.created), updated \(result.updated), failed \(result.failed.count)."
        for failure in result.failed { text += "\n" + ProductImportReport.failureLine(failure) }
        return text
    }
}
