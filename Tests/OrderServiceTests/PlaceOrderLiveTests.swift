import Contracts
import Foundation
import ServiceTestSupport
import Testing

/// What only order-svc's process shows of a placed order: its log never holds the card number.
/// The rest runs in process (``PlaceOrderTests``).
@Suite("Placing an order (live)")
struct PlaceOrderLiveTests {
    @Test("only the brand and last four digits of the card are kept, in the database and the log")
    func cardNumberIsNeverStored() async throws {
        try await withLiveOrderStack { stack in
            let shopper = try await stack.newShopper()
            try await stack.addItem(2, for: shopper)
            let order = try await stack.placeOrder(as: shopper)
            #expect(order.payment == PaymentSummary(brand: "visa", last4: "4242"))

            let contents = try await OrderDatabase(stack).storedContents()
            #expect(!contents.isEmpty)
            // The summary is stored, so the search looks where the card would be.
            #expect(contents.contains { $0.bytes.range(of: Data(order.id.utf8)) != nil })
            for (place, bytes) in contents {
                #expect(bytes.range(of: Data(TestCards.accepted.utf8)) == nil, "the card number is in \(place)")
            }
            let log = try stack.service(.order).log.lines
            #expect(!log.contains { $0.contains(TestCards.accepted) }, "the card number is in order-svc's log")
        }
    }
}
