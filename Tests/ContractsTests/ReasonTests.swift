import Contracts
import RPC
import Testing

/// The stable error reasons and their codes, transcribed from API.md's tables.
@Suite("Error reasons")
struct ReasonTests {
    static let auth: [(String, String)] = [
        ("INVALID_EMAIL", "INVALID_ARGUMENT"), ("WEAK_PASSWORD", "INVALID_ARGUMENT"),
        ("EMAIL_ALREADY_IN_USE", "ALREADY_EXISTS"), ("RATE_LIMITED", "RESOURCE_EXHAUSTED"),
        ("INVALID_TOKEN", "INVALID_ARGUMENT"), ("TOKEN_EXPIRED", "FAILED_PRECONDITION"),
        ("INVALID_CREDENTIALS", "UNAUTHENTICATED"), ("EMAIL_NOT_VERIFIED", "FAILED_PRECONDITION"),
        ("TOO_MANY_ATTEMPTS", "RESOURCE_EXHAUSTED"), ("INVALID_CREDENTIAL", "UNAUTHENTICATED"),
        ("UNSUPPORTED_PROVIDER", "UNIMPLEMENTED"), ("INVALID_REFRESH_TOKEN", "UNAUTHENTICATED"),
        ("REFRESH_TOKEN_REUSED", "UNAUTHENTICATED"), ("REQUIRES_RECENT_LOGIN", "FAILED_PRECONDITION"),
        ("MISSING_TOKEN", "UNAUTHENTICATED"), ("INVALID_ACCESS_TOKEN", "UNAUTHENTICATED"),
        ("ACCESS_TOKEN_EXPIRED", "UNAUTHENTICATED"), ("SESSION_REVOKED", "UNAUTHENTICATED"),
        ("SAME_PASSWORD", "INVALID_ARGUMENT"),
    ]
    static let catalog: [(String, String)] = [
        ("INVALID_PAGE_TOKEN", "INVALID_ARGUMENT"), ("PRODUCT_NOT_FOUND", "NOT_FOUND"),
        ("OUT_OF_STOCK", "FAILED_PRECONDITION"), ("QUERY_TOO_LONG", "INVALID_ARGUMENT"), ("INVALID_CATEGORY", "INVALID_ARGUMENT"),
        ("TOO_MANY_IDS", "INVALID_ARGUMENT"), ("INVALID_PRODUCT", "INVALID_ARGUMENT"), ("INVALID_RESERVATION", "INVALID_ARGUMENT"),
    ]
    static let basket: [(String, String)] = [
        ("PRODUCT_NOT_FOUND", "NOT_FOUND"), ("ALREADY_IN_BASKET", "ALREADY_EXISTS"), ("INVALID_COUNT", "INVALID_ARGUMENT"),
        ("BASKET_FULL", "RESOURCE_EXHAUSTED"), ("ITEM_NOT_FOUND", "NOT_FOUND"), ("VERSION_CONFLICT", "ABORTED"),
        ("INVALID_ITEM_ID", "INVALID_ARGUMENT"), ("INVALID_VERSION", "INVALID_ARGUMENT"),
        ("OUT_OF_STOCK", "FAILED_PRECONDITION"),
    ]
    static let order: [(String, String)] = [
        ("EMPTY_BASKET", "FAILED_PRECONDITION"), ("OUT_OF_STOCK", "FAILED_PRECONDITION"),
        ("PAYMENT_DECLINED", "FAILED_PRECONDITION"), ("INVALID_CARD", "INVALID_ARGUMENT"),
        ("IDEMPOTENCY_KEY_REQUIRED", "INVALID_ARGUMENT"), ("IDEMPOTENCY_KEY_REUSED", "INVALID_ARGUMENT"),
        ("REQUEST_IN_PROGRESS", "ABORTED"), ("ORDER_NOT_FOUND", "NOT_FOUND"), ("ORDER_NOT_CANCELLABLE", "FAILED_PRECONDITION"),
        ("INVALID_PAGE_TOKEN", "INVALID_ARGUMENT"), ("INVALID_ADDRESS", "INVALID_ARGUMENT"),
    ]
    static let gateway: [(String, String)] = [
        ("RATE_LIMITED", "RESOURCE_EXHAUSTED"), ("UPSTREAM_UNAVAILABLE", "UNAVAILABLE"), ("TOO_MANY_WATCHES", "RESOURCE_EXHAUSTED"),
    ]

    private static func table<Reason: ErrorReason>(_ type: Reason.Type) -> [String] {
        Reason.allCases.map { "\($0.rawValue) \($0.code.name)" }
    }

    private static func rows(_ expected: [(String, String)]) -> [String] { expected.map { "\($0) \($1)" } }

    @Test("each reason enum has exactly API.md's reasons, each with its code")
    func reasonTables() {
        #expect(Self.table(AuthReason.self) == Self.rows(Self.auth))
        #expect(Self.table(CatalogReason.self) == Self.rows(Self.catalog))
        #expect(Self.table(BasketReason.self) == Self.rows(Self.basket))
        #expect(Self.table(OrderReason.self) == Self.rows(Self.order))
        #expect(Self.table(GatewayReason.self) == Self.rows(Self.gateway))
        #expect(Self.table(CommonReason.self) == ["INVALID_PAGE_SIZE INVALID_ARGUMENT"])
    }

    @Test("a reason makes an RPCError with its code and recognises it again")
    func makesErrors() {
        let error = BasketReason.alreadyInBasket.error(BasketReason.alreadyInBasket.fixedMessage ?? "")
        #expect(error.code == .alreadyExists)
        #expect(error.reason == "ALREADY_IN_BASKET")
        #expect(error.message == "The product is already in basket.")
        #expect(BasketReason.alreadyInBasket.matches(error))
        #expect(!BasketReason.itemNotFound.matches(error))
        #expect(OrderReason.emptyBasket.fixedMessage == "Your basket is empty. Add some products first.")
        #expect(OrderReason.allCases.filter { $0.fixedMessage != nil } == [.emptyBasket])
        #expect(BasketReason.allCases.filter { $0.fixedMessage != nil } == [.alreadyInBasket])
    }

    @Test("limits that clients share match API.md")
    func limits() {
        #expect(PageSize.default == 20 && PageSize.maximum == 100)
        #expect(CatalogContract.maxBatchSize == 100)
        #expect(BasketContract.countRange == 1...10 && BasketContract.maxLines == 100)
        #expect(OrderContract.idempotencyKeyHeader == "idempotency-key" && OrderContract.idempotencyKeyLength == 1...255)
        #expect(Session(accessToken: "a", refreshToken: "r", expiresIn: 900, user: Samples.user).tokenType == "Bearer")
    }
}
