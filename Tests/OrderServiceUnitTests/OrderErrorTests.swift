@testable import order_svc
import Contracts
import RPC
import Testing
import JSON

/// `OrderError` sends exactly the code, reason, message and details API.md and the clients
/// rely on.
@Suite("OrderError: what each refusal sends")
struct OrderErrorTests {
    @Test(
        "a refusal converts to its code, reason and message",
        arguments: [
            (OrderError.idempotencyKeyRequired, RPCCode.invalidArgument, "IDEMPOTENCY_KEY_REQUIRED",
             "Send an idempotency-key header of 1 to 255 characters."),
            (.firstRequestInProgress, .aborted, "REQUEST_IN_PROGRESS", "The first request with this idempotency-key is still running."),
            (.orderBeingChanged, .aborted, "REQUEST_IN_PROGRESS", "The order is being changed; try again shortly."),
            (.emptyBasket, .failedPrecondition, "EMPTY_BASKET", "Your basket is empty. Add some products first."),
            (.paymentDeclined(reason: "Card declined."), .failedPrecondition, "PAYMENT_DECLINED", "Card declined."),
            (.orderNotCancellable(status: .pending), .failedPrecondition, "ORDER_NOT_CANCELLABLE",
             "Only a paid order can be cancelled; this one is PENDING."),
            (.upstreamUnavailable(service: "basket-svc"), .unavailable, "UPSTREAM_UNAVAILABLE",
             "basket-svc is not available; try again shortly."),
        ] as [(OrderError, RPCCode, String, String)])
    func converts(error: OrderError, code: RPCCode, reason: String, message: String) {
        let sent = RPCError(converting: error)
        #expect(sent.code == code)
        #expect(sent.reason == reason)
        #expect(sent.message == message)
        #expect(sent.details == nil)
    }

    @Test("a price that cannot be ordered is FAILED_PRECONDITION without a reason")
    func unorderablePrice() {
        let sent = OrderError.unorderablePrice(productID: 9, amount: -5).rpcError
        #expect(sent.code == .failedPrecondition)
        #expect(sent.reason == nil)
        #expect(sent.message == "Product 9 cannot be ordered at its price of -5 minor units.")
    }

    @Test("products no longer sold are OUT_OF_STOCK, named in the message, their lines sold out in the details")
    func noLongerSold() {
        let gone = [StockShortage(productId: 4, available: 0, wanted: 2)]
        let sent = OrderError.noLongerSold(productIDs: [4], shortages: gone).rpcError
        #expect(sent.code == .failedPrecondition)
        #expect(sent.reason == "OUT_OF_STOCK")
        #expect(sent.message == "Product 4 is no longer sold.")
        #expect(sent.details == .object([
            "productIds": .array([.number(4)]),
            "shortages": .array([.object(["productId": .number(4), "available": .number(0), "wanted": .number(2)])]),
        ]))
    }

    @Test("a catalog OUT_OF_STOCK without shortages is passed on as the catalog answered")
    func outOfStockAsCatalogAnswered() {
        let details = JSONValue.object(["productIds": .array([.number(8)])])
        let sent = OrderError.outOfStockAsCatalogAnswered(message: "Out of stock.", details: details).rpcError
        #expect(sent.code == .failedPrecondition)
        #expect(sent.reason == "OUT_OF_STOCK")
        #expect(sent.message == "Out of stock.")
        #expect(sent.details == details)
    }
}
