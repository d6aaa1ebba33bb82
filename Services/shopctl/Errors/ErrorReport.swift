import RPC

/// What shopctl prints for a failure and the status it exits with: one line on standard error,
/// `error: REASON: message (what to do)`, naming the server's stable reason (API.md) or the
/// status code when there is none, the server's message, and a hint for the common reasons.
struct ErrorReport: Sendable, Equatable {
    /// The line to print, without a newline.
    let line: String
    /// The status to exit with.
    let status: ExitStatus

    /// The report of a server's answer or a transport failure.
    init(_ error: RPCError) {
        let reason = error.reason ?? error.code.name
        let message = error.message.isEmpty ? error.code.name : error.message
        let hint = Self.hint(reason: error.reason, code: error.code)
        line = Self.compose(reason: reason, message: message, hint: hint)
        status = ExitStatus(error.code)
    }

    /// The report of a failure shopctl found itself.
    init(_ error: ShopctlError) {
        line = Self.compose(reason: error.reason, message: error.message, hint: error.hint)
        status = error.status
    }

    /// The report of anything else: a general failure with the error's own description.
    init(other error: any Error) {
        switch error {
        case let error as RPCError: self.init(error)
        case let error as ShopctlError: self.init(error)
        default: self.init(line: Self.compose(reason: "LOCAL_ERROR", message: "\(error)", hint: nil), status: .failure)
        }
    }

    private init(line: String, status: ExitStatus) {
        self.line = line
        self.status = status
    }

    private static func compose(reason: String, message: String, hint: String?) -> String {
        let flat = message.split(whereSeparator: \.isNewline).joined(separator: " ")
        guard let hint else { return "error: \(reason): \(flat)" }
        return "error: \(reason): \(flat) (\(hint))"
    }

    /// What to do about `reason` (or, without one, about `code`); nil when there is nothing useful to say.
    static func hint(reason: String?, code: RPCCode) -> String? {
        if let reason, let hint = reasonHints[reason] { return hint }
        switch code {
        case .unauthenticated: return "run `shopctl auth login`"
        case .unavailable: return "is the gateway running? check `shopctl health`, --gateway or SHOP_GATEWAY"
        case .deadlineExceeded: return "the gateway did not answer in time; try again or raise --timeout"
        case .resourceExhausted: return "wait a little and try again"
        case .permissionDenied: return "this account or key may not do that"
        default: return nil
        }
    }

    private static let reasonHints: [String: String] = [
        // Sign-in and accounts.
        "MISSING_TOKEN": "run `shopctl auth login`",
        "INVALID_ACCESS_TOKEN": "run `shopctl auth login`",
        "ACCESS_TOKEN_EXPIRED": "run `shopctl auth login`",
        "SESSION_REVOKED": "the session was signed out elsewhere; run `shopctl auth login`",
        "INVALID_REFRESH_TOKEN": "run `shopctl auth login`",
        "REFRESH_TOKEN_REUSED": "run `shopctl auth login`",
        "INVALID_CREDENTIALS": "check the email and password; forgot it? `shopctl auth reset-password --email EMAIL`",
        "INVALID_CREDENTIAL": "get a fresh ID token from the provider and try again",
        "EMAIL_NOT_VERIFIED":
            "a new verification email was sent; run `shopctl auth verify TOKEN` with the token it carries",
        "EMAIL_ALREADY_IN_USE": "sign in with `shopctl auth login`, or `shopctl auth reset-password`",
        "INVALID_EMAIL": "check the email address",
        "WEAK_PASSWORD": "use at least 8 characters that are not your email or a common password",
        "INVALID_TOKEN": "copy the token from the newest email; tokens work once",
        "TOKEN_EXPIRED": "ask for a new email: `shopctl auth resend-verification` or `shopctl auth reset-password`",
        "TOO_MANY_ATTEMPTS": "wait 15 minutes, or reset the password with `shopctl auth reset-password`",
        "RATE_LIMITED": "wait a little and try again",
        "REQUIRES_RECENT_LOGIN": "sign in again with `shopctl auth login`, then retry",
        "UNSUPPORTED_PROVIDER": "this gateway does not accept that sign-in provider",
        // Catalog and admin.
        "PRODUCT_NOT_FOUND": "check the id with `shopctl products list`",
        "INVALID_PAGE_TOKEN": "start again without --page-token",
        "MISSING_API_KEY": "pass --api-key or set SHOP_ADMIN_API_KEY",
        "INVALID_API_KEY": "check --api-key or SHOP_ADMIN_API_KEY",
        // Basket.
        "ALREADY_IN_BASKET": "change its count with `shopctl basket set ITEM COUNT`",
        "ITEM_NOT_FOUND": "see the item ids with `shopctl basket show`",
        "INVALID_COUNT": "a count is 1 to 10 (0 removes the line with `basket set`)",
        "BASKET_FULL": "a basket holds 100 lines; remove some first",
        "VERSION_CONFLICT": "the basket changed meanwhile; look with `shopctl basket show` and retry",
        // Orders.
        "EMPTY_BASKET": "add products with `shopctl basket add PRODUCT`",
        "OUT_OF_STOCK": "lower the count with `shopctl basket set ITEM COUNT` or remove the line",
        "PAYMENT_DECLINED": "try another card; the order is kept as PAYMENT_FAILED and the basket as it was",
        "INVALID_CARD": "check --card, --exp MM/YY and --cvc",
        "REQUEST_IN_PROGRESS": "the same order is still being placed; wait and check `shopctl order list`",
        "IDEMPOTENCY_KEY_REUSED": "run `shopctl order place` again; it makes a new key",
        "ORDER_NOT_FOUND": "see your orders with `shopctl order list`",
        "ORDER_NOT_CANCELLABLE": "only PAID orders can be cancelled; see its status with `shopctl order show ID`",
        // Gateway and transport.
        "UPSTREAM_UNAVAILABLE": "the gateway or a service behind it is down; check `shopctl health`, --gateway or SHOP_GATEWAY",
        "UNKNOWN_METHOD": "see the methods with `shopctl describe`",
        "MALFORMED_MESSAGE": "see the fields with `shopctl describe SERVICE`",
        "MESSAGE_TOO_LARGE": "send less at once",
    ]
}
