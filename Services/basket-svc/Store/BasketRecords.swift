internal import Contracts
internal import Foundation
internal import ServiceKit

/// One stored line: a product with the title, unit price and image catalog-svc gave for it.
struct LineRecord: Sendable, Hashable {
    /// The item id, a lower-case UUID.
    var id: String
    /// The catalog product.
    var productID: Int
    /// The product's title when it was added.
    var title: String
    /// The unit price in minor units.
    var unitAmount: Int
    /// The ISO 4217 currency of `unitAmount`.
    var currency: String
    /// The product's image URL.
    var imageURL: String
    /// How many units, 1...10.
    var count: Int

    /// The line as API.md's `BasketItem`.
    var message: BasketItem {
        BasketItem(
            id: id, productId: productID, productTitle: title, unitPrice: Money(amount: unitAmount, currency: currency),
            imageURL: imageURL, count: count, lineTotal: Money(amount: unitAmount * count, currency: currency))
    }
}

/// A user's basket as stored: its version, when it last changed and its lines, oldest first.
struct BasketRecord: Sendable, Hashable {
    /// Goes up by one on every change; 0 for a basket that never changed.
    var version: Int
    /// When it last changed (Unix milliseconds); 0 for a basket that never changed.
    var updatedAt: Int64
    /// The lines, oldest first.
    var lines: [LineRecord]

    /// The basket of a user who never changed theirs.
    static let empty = BasketRecord(version: 0, updatedAt: 0, lines: [])

    /// The currency of an empty basket's total.
    static let defaultCurrency = "USD"

    /// The currency of every line, or nil for an empty basket.
    var currency: String? { lines.first?.currency }

    /// Why `productID` (priced in `currency`, when known yet) cannot be added; nil when it can.
    /// Checked before asking the catalog and again inside the write transaction.
    func refusal(toAdd productID: Int, currency productCurrency: String? = nil) -> BasketError? {
        if let line = lines.first(where: { $0.productID == productID }) {
            return .alreadyInBasket(productID: productID, itemID: line.id)
        }
        if lines.count >= BasketContract.maxLines { return .basketFull }
        if let productCurrency, let currency, productCurrency != currency {
            return .currencyMismatch(basket: currency, product: productCurrency)
        }
        return nil
    }

    /// The basket as API.md's `Basket`: line totals, the item count and the total.
    var message: Basket {
        let items = lines.map(\.message)
        return Basket(
            items: items, itemCount: lines.reduce(0) { $0 + $1.count },
            total: Money(amount: items.reduce(0) { $0 + $1.lineTotal.amount }, currency: currency ?? Self.defaultCurrency),
            version: version, updatedAt: BasketClock.rfc3339(milliseconds: updatedAt))
    }
}

/// Millisecond clock readings and their RFC 3339 form.
enum BasketClock {
    /// The current time in Unix milliseconds.
    static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

    /// `milliseconds` as an RFC 3339 UTC timestamp with milliseconds, e.g. `2026-11-22T01:41:17.250Z`.
    static func rfc3339(milliseconds: Int64) -> String {
        let (seconds, millisecond) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        let fraction = String(millisecond + 1000).dropFirst()  // three digits, zero-padded
        return "\(Timestamp.format(Int(seconds))).\(fraction)Z"
    }
}
