@testable import catalog_svc
import Contracts
import RPC
import Testing
import JSON

/// `CatalogError` sends exactly the code, reason, message and details API.md and order-svc
/// rely on.
@Suite("CatalogError: what each refusal sends")
struct CatalogErrorTests {
    @Test("an unknown product is NOT_FOUND/PRODUCT_NOT_FOUND naming its id")
    func productNotFound() {
        let sent = RPCError(converting: CatalogError.productNotFound(id: 42))
        #expect(sent.code == .notFound)
        #expect(sent.reason == "PRODUCT_NOT_FOUND")
        #expect(sent.message == "No product has id 42.")
        #expect(sent.details == nil)
    }

    @Test("a reservation of unknown products names each, in the message and in productIds")
    func unknownProducts() {
        let sent = CatalogError.unknownProducts(ids: [7, 3]).rpcError
        #expect(sent.code == .notFound)
        #expect(sent.reason == "PRODUCT_NOT_FOUND")
        #expect(sent.message == "No product has id 7, 3.")
        #expect(sent.details == .object(["productIds": .array([.number(7), .number(3)])]))
    }

    @Test("OUT_OF_STOCK says how many are left of each short product, with productIds and shortages")
    func outOfStock() {
        let shortages = [
            StockShortage(productId: 25, available: 7, wanted: 10), StockShortage(productId: 3, available: 0, wanted: 1),
        ]
        let sent = CatalogError.outOfStock(shortages: shortages).rpcError
        #expect(sent.code == .failedPrecondition)
        #expect(sent.reason == "OUT_OF_STOCK")
        #expect(sent.message == "Not enough stock: product 25 has 7 left (10 wanted); product 3 is sold out.")
        #expect(sent.details == .object([
            "productIds": .array([.number(25), .number(3)]),
            "shortages": .array([
                .object(["productId": .number(25), "available": .number(7), "wanted": .number(10)]),
                .object(["productId": .number(3), "available": .number(0), "wanted": .number(1)]),
            ]),
        ]))
    }

    @Test("a page token of another listing is INVALID_ARGUMENT/INVALID_PAGE_TOKEN")
    func invalidPageToken() {
        let sent = CatalogError.invalidPageToken.rpcError
        #expect(sent.code == .invalidArgument)
        #expect(sent.reason == "INVALID_PAGE_TOKEN")
        #expect(sent.message == "The page token is not valid for this request; start from the first page.")
        #expect(sent.details == nil)
    }
}
