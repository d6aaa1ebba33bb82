import Contracts

extension HumanText {
    /// One order in full: status, total, payment, address, lines.
    static func order(_ order: Order) -> String {
        var payment = ""
        if let card = order.payment { payment = "\(card.brand) ending in \(card.last4)" }
        var text = "Order \(order.id): \(order.status.rawValue)\n"
        text += fields([
            ("Placed", order.createdAt),
            ("Updated", order.updatedAt == order.createdAt ? "" : order.updatedAt),
            ("Total", MoneyText.format(order.total)),
            ("Card", payment),
            ("Ship to", address(order.shippingAddress)),
        ])
        var table = Table([
            .init("PRODUCT", .right), .init("TITLE", shrinks: true), .init("PRICE", .right), .init("COUNT", .right),
            .init("TOTAL", .right),
        ])
        for item in order.items {
            table.append([
                String(item.productId), Table.truncate(item.productTitle, to: 40), MoneyText.format(item.unitPrice),
                String(item.count), MoneyText.format(item.lineTotal),
            ])
        }
        return text + "\n\n" + table.render()
    }

    /// A page of orders, newest first, and how to get the next page (`command` with its page token).
    static func orders(_ page: ListOrdersResponse, command: String) -> String {
        guard !page.orders.isEmpty else { return "No orders yet." }
        var table = Table([
            .init("ORDER"), .init("STATUS"), .init("ITEMS", .right), .init("TOTAL", .right), .init("PLACED"),
        ])
        for order in page.orders {
            table.append([
                order.id, order.status.rawValue, String(order.items.reduce(0) { $0 + $1.count }),
                MoneyText.format(order.total), order.createdAt,
            ])
        }
        var text = table.render()
        if let next = nextPage(page.nextPageToken, command: command) { text += "\n" + next }
        return text
    }

    /// An address on one line: "Ada Lovelace, 12 Analytical Row, Flat 2, London N1 9GU, GB".
    static func address(_ address: Address) -> String {
        var parts = [address.name, address.line1]
        if let line2 = address.line2, !line2.isEmpty { parts.append(line2) }
        parts.append("\(address.city) \(address.postalCode)")
        parts.append(address.country)
        return parts.joined(separator: ", ")
    }
}
