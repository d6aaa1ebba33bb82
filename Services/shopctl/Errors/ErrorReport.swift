import Foundation
import RPC
import JSON

/// What shopctl prints for a failure and the status it exits with: one line on standard error,
/// `error: REASON: message (what to do)`, naming the server's stable reason (API.md) or the
/// status code when there is none, the server's message, and a hint for the common reasons —
/// or, with `--json`, the same as one JSON object, `{"error": {"code", "reason", "message", "hint"}}`.
/// A failure made of several problems (a product file's faulty products) lists them under
/// that line, one per line, and in the JSON object as `problems`.
struct ErrorReport: Sendable, Equatable {
    /// The gRPC status code's name, e.g. `NOT_FOUND` (`INVALID_ARGUMENT` for a usage error).
    let code: String
    /// The stable reason, e.g. `PRODUCT_NOT_FOUND`; the code's name when there is none.
    let reason: String
    /// What went wrong, on one line.
    let message: String
    /// What to do about it; nil when there is nothing useful to say.
    let hint: String?
    /// The status to exit with.
    let status: ExitStatus
    /// The failure's parts, one line each; empty for most failures.
    let problems: [String]

    /// The report of a server's answer or a transport failure.
    init(_ error: RPCError) {
        self.init(
            code: error.code.name, reason: error.reason ?? error.code.name,
            message: error.message.isEmpty ? error.code.name : error.message,
            hint: Self.hint(for: error), status: ExitStatus(error.code))
    }

    /// The report of a failure shopctl found itself.
    init(_ error: ShopctlError) {
        self.init(
            code: error.code.name, reason: error.reason, message: error.message, hint: error.hint, status: error.status,
            problems: error.problems)
    }

    /// The report of anything else: a general failure with the error's own description.
    init(other error: any Error) {
        switch error {
        case let error as RPCError: self.init(error)
        case let error as ShopctlError: self.init(error)
        default: self.init(ShopctlError.local("\(error)"))
        }
    }

    /// A report of these parts; the message, and each problem, is joined onto one line.
    init(code: String, reason: String, message: String, hint: String?, status: ExitStatus, problems: [String] = []) {
        self.code = code
        self.reason = reason
        self.message = Self.oneLine(message)
        self.hint = hint
        self.status = status
        self.problems = problems.map(Self.oneLine)
    }

    /// What to print, without a final newline: `error: REASON: message (hint)` — without the
    /// reason for a usage error, whose message says what is wrong with the command line — then
    /// each problem on a line of its own, indented.
    var line: String {
        let head = reason == UsageReport.reason ? "error: " : "error: \(reason): "
        let first = hint.map { "\(head)\(message) (\($0))" } ?? head + message
        return ([first] + problems.map { "  " + $0 }).joined(separator: "\n")
    }

    /// `text` on one line: its line breaks become spaces.
    private static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }

    /// The report as one line of JSON, `{"error": {"code", "reason", "message", "hint"}}`
    /// (`hint` null when there is none; `problems`, an array of strings, when there are some),
    /// for `--json`.
    var json: String {
        let hint: JSONValue = self.hint.map { .string($0) } ?? .null
        var fields: [String: JSONValue] = [
            "code": .string(code), "reason": .string(reason), "message": .string(message), "hint": hint,
        ]
        if !problems.isEmpty { fields["problems"] = .array(problems.map { .string($0) }) }
        let object = JSONValue.object(["error": .object(fields)])
        let data = (try? Foundation.JSONEncoder.sortedKeys.encode(object)) ?? Data(#"{"error":{}}"#.utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// What to do about `error`: its reason's hint (using its details where they say more),
    /// else its code's; nil when there is nothing useful to say.
    static func hint(for error: RPCError) -> String? {
        if let reason = error.reason, let hint = detailedHint(reason: reason, details: error.details) { return hint }
        return hint(reason: error.reason, code: error.code)
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

    /// The hints that name something from the error's details: the item already in the
    /// basket, how many are left, how long to wait.
    private static func detailedHint(reason: String, details: JSONValue?) -> String? {
        switch reason {
        case "ALREADY_IN_BASKET":
            guard let item = details?["itemId"]?.stringValue else { return nil }
            return "change its count with `shopctl basket set \(item) COUNT`"
        case "OUT_OF_STOCK":
            return stockHint(details)
        case "RATE_LIMITED":
            guard let seconds = details?["retryAfterSeconds"]?.numberValue, seconds > 0, seconds < 1e6 else { return nil }
            return "wait \(Int(seconds.rounded(.up))) s, then try again"
        default:
            return nil
        }
    }

    /// What to do about too little stock, from the details: one product (AddItem,
    /// UpdateItemCount: `{productId, available}`) or each product short at checkout
    /// (PlaceOrder: `shortages`), as the commands that fix the basket.
    private static func stockHint(_ details: JSONValue?) -> String? {
        func whole(_ value: JSONValue?) -> Int? {
            guard let number = value?.numberValue, number >= 0, number < 1e15, number == number.rounded() else { return nil }
            return Int(number)
        }
        if let product = whole(details?["productId"]), let available = whole(details?["available"]) {
            return available == 0
                ? "remove it with `shopctl basket remove \(product)` if it is in your basket"
                : "ask for at most \(available): `shopctl basket add \(product) --count \(available)`, or `shopctl basket set \(product) \(available)` for a line you have"
        }
        // Bounded: a hint names a few products, never the whole list a server could send.
        let fixes = (details?["shortages"]?.arrayValue ?? []).prefix(5).compactMap { shortage -> String? in
            guard let product = whole(shortage["productId"]), let available = whole(shortage["available"]) else { return nil }
            return available == 0 ? "`shopctl basket remove \(product)`" : "`shopctl basket set \(product) \(available)`"
        }
        return fixes.isEmpty ? nil : "fix the basket with \(fixes.joined(separator: ", ")), then place the order again"
    }

    private static let reasonHints: [String: String] = [
        // Sign-in and accounts.
        "MISSING_TOKEN": "run `shopctl auth login`",
        "INVALID_ACCESS_TOKEN": "run `shopctl auth login`",
        "ACCESS_TOKEN_EXPIRED": "run `shopctl auth login`",
        "SESSION_REVOKED": "the session was signed out elsewhere and shopctl forgot it; run `shopctl auth login`",
        "INVALID_REFRESH_TOKEN": "run `shopctl auth login`",
        "REFRESH_TOKEN_REUSED": "run `shopctl auth login`",
        "INVALID_CREDENTIALS": "check the email and password; forgot it? `shopctl auth reset-password --email EMAIL`",
        "INVALID_CREDENTIAL": "get a fresh ID token from the provider and try again",
        "EMAIL_NOT_VERIFIED":
            "a new verification email was sent; run `shopctl auth verify TOKEN` with the token it carries",
        "EMAIL_ALREADY_IN_USE": "sign in with `shopctl auth login`, or `shopctl auth reset-password`",
        "INVALID_EMAIL": "check the email address",
        "WEAK_PASSWORD": "use at least 8 characters that are not your email or a common password",
        "SAME_PASSWORD": "choose a password different from the current one",
        "INVALID_TOKEN": "copy the token from the newest email; tokens work once",
        "TOKEN_EXPIRED": "ask for a new email: `shopctl auth resend-verification` or `shopctl auth reset-password`",
        "TOO_MANY_ATTEMPTS": "wait 15 minutes, or reset the password with `shopctl auth reset-password`",
        "RATE_LIMITED": "wait a little and try again",
        "REQUIRES_RECENT_LOGIN": "sign in again with `shopctl auth login`, then retry",
        "UNSUPPORTED_PROVIDER": "this gateway does not accept that sign-in provider",
        // Catalog and admin.
        "PRODUCT_NOT_FOUND": "check the id with `shopctl products list`",
        "UNKNOWN_CATEGORY": "see the categories with `shopctl categories`",
        "INVALID_PAGE_TOKEN": "start again without --page-token",
        "MISSING_API_KEY": "set SHOP_ADMIN_API_KEY (or pass --api-key) to the gateway's admin key",
        "INVALID_API_KEY": "check SHOP_ADMIN_API_KEY or --api-key",
        // Basket.
        "ALREADY_IN_BASKET": "change its count with `shopctl basket set ITEM COUNT` (item ids: `shopctl basket show`)",
        "ITEM_NOT_FOUND": "see the item ids with `shopctl basket show`",
        "INVALID_COUNT": "a count is 1 to 10 (0 removes the line with `basket set`)",
        "BASKET_FULL": "a basket holds 100 lines; remove some first",
        "VERSION_CONFLICT": "the basket changed meanwhile; look with `shopctl basket show` and retry",
        // Orders.
        "EMPTY_BASKET": "add products with `shopctl basket add PRODUCT`",
        "OUT_OF_STOCK": "lower the count with `shopctl basket set PRODUCT COUNT` or remove the line",
        "PAYMENT_DECLINED": "try another card; the order is kept as PAYMENT_FAILED and the basket as it was",
        "INVALID_CARD": "check --card, --exp MM/YY and --cvc",
        "REQUEST_IN_PROGRESS": "the same order is still being placed; wait and check `shopctl order list`",
        "IDEMPOTENCY_KEY_REUSED": "run `shopctl order place` again; it makes a new key",
        "ORDER_NOT_FOUND": "see your orders with `shopctl order list`",
        "ORDER_NOT_CANCELLABLE": "only PAID orders can be cancelled; see its status with `shopctl order show ID`",
        // Gateway and transport.
        "GATEWAY_UNREACHABLE":
            "is it running? see `deploy/compose status`; else check --gateway, SHOP_GATEWAY or the profile's gateway (`shopctl config show`)",
        "GATEWAY_HOST_UNKNOWN": "check the host name in --gateway, SHOP_GATEWAY or the profile's gateway (`shopctl config show`)",
        "UPSTREAM_UNAVAILABLE": "a service behind the gateway is down; see which with `shopctl health` or `deploy/compose status`",
        "UNKNOWN_METHOD": "see the methods with `shopctl describe`",
        "MALFORMED_MESSAGE": "see the fields with `shopctl describe SERVICE`",
        "MESSAGE_TOO_LARGE": "send less at once",
    ]
}

extension Foundation.JSONEncoder {
    /// An encoder with sorted keys, so the same error prints the same bytes every time.
    fileprivate static var sortedKeys: Foundation.JSONEncoder {
        let encoder = Foundation.JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
