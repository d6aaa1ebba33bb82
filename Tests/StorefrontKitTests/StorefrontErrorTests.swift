import Foundation
import JSON
import RPC
@testable import StorefrontKit
import Testing

/// Errors as the gateway's Connect edge writes them, read back into ``StorefrontError``.
@Suite("StorefrontKit errors")
struct StorefrontErrorTests {
    /// Every reason API.md names.
    static let apiReasons = [
        "INVALID_EMAIL", "WEAK_PASSWORD", "EMAIL_ALREADY_IN_USE", "RATE_LIMITED", "INVALID_TOKEN", "TOKEN_EXPIRED",
        "INVALID_CREDENTIALS", "EMAIL_NOT_VERIFIED", "TOO_MANY_ATTEMPTS", "INVALID_CREDENTIAL", "UNSUPPORTED_PROVIDER",
        "INVALID_REFRESH_TOKEN", "REFRESH_TOKEN_REUSED", "REQUIRES_RECENT_LOGIN", "MISSING_TOKEN", "INVALID_ACCESS_TOKEN",
        "ACCESS_TOKEN_EXPIRED", "SESSION_REVOKED", "INVALID_PAGE_TOKEN", "PRODUCT_NOT_FOUND", "OUT_OF_STOCK",
        "ALREADY_IN_BASKET", "INVALID_COUNT", "BASKET_FULL", "ITEM_NOT_FOUND", "VERSION_CONFLICT", "EMPTY_BASKET",
        "PAYMENT_DECLINED", "INVALID_CARD", "IDEMPOTENCY_KEY_REQUIRED", "IDEMPOTENCY_KEY_REUSED", "REQUEST_IN_PROGRESS",
        "ORDER_NOT_FOUND", "ORDER_NOT_CANCELLABLE", "MESSAGE_TOO_LARGE", "MALFORMED_MESSAGE", "UPSTREAM_UNAVAILABLE",
    ]

    @Test("Every reason of API.md has its own case, and names itself back", arguments: apiReasons)
    func everyReasonIsNamed(name: String) {
        let reason = StorefrontError.Reason(wireName: name)
        #expect(reason != .other(name))
        #expect(reason.wireName == name)
    }

    @Test("The named reasons are all different")
    func reasonsAreDistinct() {
        let reasons = Set(Self.apiReasons.map { StorefrontError.Reason(wireName: $0) })
        #expect(reasons.count == Self.apiReasons.count)
    }

    @Test("A reason this version does not know is kept by name")
    func unknownReasonKept() {
        #expect(StorefrontError.Reason(wireName: "GIFT_CARD_EXPIRED") == .other("GIFT_CARD_EXPIRED"))
        #expect(StorefrontError.Reason.other("GIFT_CARD_EXPIRED").wireName == "GIFT_CARD_EXPIRED")
    }

    @Test("A unary error body (basket's OUT_OF_STOCK) gives code, reason with what is available, message and details")
    func unaryOutOfStock() throws {
        let debug = #"{"available":2,"productId":7,"reason":"OUT_OF_STOCK"}"#
        let body = """
            {"code":"failed_precondition","message":"Only 2 left.","details":[{"type":"shop.v1.ErrorReason",\
            "value":"\(Data(debug.utf8).base64EncodedString().replacingOccurrences(of: "=", with: ""))","debug":\(debug)}]}
            """
        let error = StorefrontError(
            ConnectErrorDecoding.unaryError(httpStatus: 400, body: Data(body.utf8), reasonHeader: "OUT_OF_STOCK"))
        #expect(error.code == .failedPrecondition)
        #expect(error.reason == .outOfStock(productID: 7, available: 2))
        #expect(error.message == "Only 2 left.")
        #expect(error.details == .object(["available": .number(2), "productId": .number(7)]))
    }

    @Test("Without `debug` the detail's base64 value is read")
    func detailValueWithoutDebug() {
        let value = Data(#"{"reason":"RATE_LIMITED","retryAfterSeconds":3}"#.utf8).base64EncodedString()
        let body = #"{"code":"resource_exhausted","details":[{"type":"shop.v1.ErrorReason","value":"\#(value)"}]}"#
        let error = StorefrontError(ConnectErrorDecoding.unaryError(httpStatus: 429, body: Data(body.utf8), reasonHeader: nil))
        #expect(error.reason == .rateLimited(retryAfter: .seconds(3)))
    }

    @Test("An order's OUT_OF_STOCK names the first shortage; stockShortages lists them all")
    func orderShortages() {
        let details: JSONValue = .object([
            "productIds": .array([.number(3), .number(25)]),
            "shortages": .array([
                .object(["productId": .number(3), "available": .number(0), "wanted": .number(1)]),
                .object(["productId": .number(25), "available": .number(7), "wanted": .number(10)]),
            ]),
        ])
        let error = StorefrontError(RPCError(code: .failedPrecondition, reason: "OUT_OF_STOCK", message: "", details: details))
        #expect(error.reason == .outOfStock(productID: 3, available: 0))
        #expect(error.stockShortages.map(\.productId) == [3, 25])
    }

    @Test("A body that is not a Connect error takes its code from the HTTP status and the reason from the header")
    func nonConnectBody() {
        let error = ConnectErrorDecoding.unaryError(httpStatus: 503, body: Data("<html>down</html>".utf8), reasonHeader: nil)
        #expect(error.code == .unavailable)
        #expect(error.message.contains("503"))
        let unauthorized = ConnectErrorDecoding.unaryError(httpStatus: 401, body: Data(), reasonHeader: "MISSING_TOKEN")
        #expect(unauthorized.code == .unauthenticated)
        #expect(unauthorized.reason == "MISSING_TOKEN")
    }

    @Test("End-of-stream: {} is success; an error carries its code, message and the reason from the metadata")
    func endOfStream() throws {
        #expect(ConnectErrorDecoding.endOfStreamStatus(Data("{}".utf8)) == nil)
        let payload = #"{"error":{"code":"unauthenticated","message":"Signed out."},"metadata":{"shop-error-reason":["SESSION_REVOKED"]}}"#
        let error = try #require(ConnectErrorDecoding.endOfStreamStatus(Data(payload.utf8)))
        #expect(error.code == .unauthenticated)
        #expect(error.reason == "SESSION_REVOKED")
        #expect(error.message == "Signed out.")
        #expect(ConnectErrorDecoding.endOfStreamStatus(Data("nope".utf8))?.code == .internal)
    }

    @Test("Connect code names name every code and read back", arguments: RPCCode.all)
    func connectNames(code: RPCCode) {
        #expect(RPCCode(connectName: code.connectName) == code)
        #expect(code.connectName == (code == .cancelled ? "canceled" : code.name.lowercased()))
    }

    @Test("Cancellation and other failures become StorefrontErrors")
    func conversion() {
        #expect(StorefrontError.converting(CancellationError()).code == .cancelled)
        #expect(StorefrontError.converting(URLError(.badURL)).code == .internal)
    }
}
