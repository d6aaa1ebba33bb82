import Contracts
import Foundation
import RPC
import ServiceTestSupport
@testable import StorefrontKit
import Testing

/// What the catalog and orders suites share: the basket filled without the basket surface
/// (its calls as the gateway takes them), the address shipped to and the test processor's
/// cards (API.md §6).
extension KitStack {
    /// Where the orders of these tests ship to.
    static let address = Address(name: "Kit Shopper", line1: "1 Market Street", city: "Springfield", postalCode: "12345", country: "US")

    /// A card of the test processor with `number`, valid for years to come.
    static func card(_ number: String) -> CardDetails {
        CardDetails(cardNumber: number, expMonth: 12, expYear: Calendar.current.component(.year, from: Date()) + 3, cvc: "123")
    }

    /// A Luhn-valid card the test processor accepts.
    static let goodCard = card("4242424242424242")
    /// The card the test processor declines.
    static let declinedCard = card("4000000000000002")
    /// A card number that fails the Luhn check.
    static let invalidCard = card("4242424242424241")

    /// Adds `count` of `productID` to the basket of `client`'s user; returns the basket.
    @discardableResult
    static func addToBasket(_ client: StorefrontClient, productID: Int, count: Int = 1) async throws -> Basket {
        try await client.calls.signedIn(BasketContract.addItem, AddItemRequest(productId: productID, count: count))
    }

    /// How many charges the test payment processor's ledger in order-svc's database holds
    /// (one per order it charged; a repeat of an order's charge is not recorded again).
    func chargeCount(sourceLocation: SourceLocation = #_sourceLocation) async throws -> Int {
        let database = stack.dataDirectory(.order).appendingPathComponent("order.sqlite").path
        let result = try await Command.run(
            "sqlite3", ["-batch", "-cmd", ".timeout 5000", database, "SELECT count(*) FROM test_charges"], timeout: .seconds(30))
        try #require(result.status == 0, "sqlite3 failed: \(result.errors)", sourceLocation: sourceLocation)
        return try #require(Int(result.output.trimmingCharacters(in: .whitespacesAndNewlines)), sourceLocation: sourceLocation)
    }

    /// The basket of `client`'s user.
    static func basket(_ client: StorefrontClient) async throws -> Basket {
        try await client.calls.signedIn(BasketContract.getBasket, Empty())
    }
}
