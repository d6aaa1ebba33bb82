import Foundation
public import JSON

extension StorefrontError {
    /// The stable reasons of API.md, by name; a reason this version does not know stays as
    /// `.other` with its wire name, so a newer server never breaks an older app. Where the
    /// server's details say more (how many are left, how long to wait), the case carries it.
    public enum Reason: Hashable, Sendable {
        // Sign-up, sign-in and accounts (auth-svc).
        /// The email address is not valid.
        case invalidEmail
        /// The password breaks the policy (length, common, equal to the email).
        case weakPassword
        /// An account with this email exists.
        case emailAlreadyInUse
        /// Too many requests from this client; `retryAfter` says how long to wait, when known.
        case rateLimited(retryAfter: Duration?)
        /// A verification or reset link's token is unknown or used.
        case invalidToken
        /// A verification or reset link's token expired.
        case tokenExpired
        /// Wrong email or password (the same answer for both).
        case invalidCredentials
        /// The email is not verified yet (a new verification email was sent).
        case emailNotVerified
        /// Too many failed sign-ins for this account; wait and retry.
        case tooManyAttempts
        /// A Google or Apple ID token was refused.
        case invalidCredential
        /// The identity provider is not supported or not configured.
        case unsupportedProvider
        /// The refresh token is unknown or expired.
        case invalidRefreshToken
        /// A refresh token was used twice: the whole session family is revoked.
        case refreshTokenReused
        /// The account must have signed in recently (or give its password) for this.
        case requiresRecentLogin
        /// The call needs a signed-in user and carried no token.
        case missingToken
        /// The access token is not valid.
        case invalidAccessToken
        /// The access token expired (the client refreshes it on its own).
        case accessTokenExpired
        /// The session was revoked (signed out everywhere, password changed, account deleted).
        case sessionRevoked

        // Catalog, basket and orders.
        /// A page token is not valid for this listing.
        case invalidPageToken
        /// No product with this id.
        case productNotFound
        /// The product is in the basket already ("The product is already in basket.").
        case alreadyInBasket
        /// A basket line's count is out of range (1...10).
        case invalidCount
        /// The basket holds the most lines it may.
        case basketFull
        /// Not enough stock: how many of `productID` are `available` now, when the details say.
        /// Placing an order may name several products: see ``StorefrontError/stockShortages``.
        case outOfStock(productID: Int?, available: Int?)
        /// No basket line with this id.
        case itemNotFound
        /// The basket changed since the version the call expected.
        case versionConflict
        /// The basket is empty.
        case emptyBasket
        /// The card was declined.
        case paymentDeclined
        /// The card number, expiry or CVC is not valid.
        case invalidCard
        /// Placing an order needs an idempotency key.
        case idempotencyKeyRequired
        /// The idempotency key was used with a different request.
        case idempotencyKeyReused
        /// The same order is being placed right now.
        case requestInProgress
        /// No order with this id for this user.
        case orderNotFound
        /// The order can no longer be cancelled.
        case orderNotCancellable

        // Any call.
        /// A message was over the size limit.
        case messageTooLarge
        /// A message was not valid JSON or had wrong field types.
        case malformedMessage
        /// The service behind the gateway is down.
        case upstreamUnavailable

        /// A reason this version does not know, as the server named it.
        case other(String)
    }
}

extension StorefrontError.Reason {
    /// The reason `name` (e.g. `OUT_OF_STOCK`), reading what `details` add to it.
    public init(wireName name: String, details: JSONValue? = nil) {
        switch name {
        case "RATE_LIMITED":
            let seconds = details?["retryAfterSeconds"]?.numberValue
            // A server's number, not trusted: negative, huge or not finite reads as no hint (no trap).
            let milliseconds = seconds.flatMap { $0 >= 0 ? Int64(exactly: ($0 * 1000).rounded()) : nil }
            self = .rateLimited(retryAfter: milliseconds.map { .milliseconds($0) })
        case "OUT_OF_STOCK":
            // Basket: {productId, available}; orders: the first of `shortages`.
            let entry = details?["shortages"]?.arrayValue?.first ?? details
            self = .outOfStock(productID: Self.integer(entry?["productId"]), available: Self.integer(entry?["available"]))
        default:
            self = Self.plainReasons[name] ?? .other(name)
        }
    }

    /// The name on the wire, e.g. `OUT_OF_STOCK`.
    public var wireName: String {
        switch self {
        case .rateLimited: "RATE_LIMITED"
        case .outOfStock: "OUT_OF_STOCK"
        case .other(let name): name
        default: Self.plainReasons.first { $0.value == self }?.key ?? ""
        }
    }

    /// The reasons that carry nothing, by wire name.
    private static let plainReasons: [String: Self] = [
        "INVALID_EMAIL": .invalidEmail, "WEAK_PASSWORD": .weakPassword, "EMAIL_ALREADY_IN_USE": .emailAlreadyInUse,
        "INVALID_TOKEN": .invalidToken, "TOKEN_EXPIRED": .tokenExpired, "INVALID_CREDENTIALS": .invalidCredentials,
        "EMAIL_NOT_VERIFIED": .emailNotVerified, "TOO_MANY_ATTEMPTS": .tooManyAttempts,
        "INVALID_CREDENTIAL": .invalidCredential, "UNSUPPORTED_PROVIDER": .unsupportedProvider,
        "INVALID_REFRESH_TOKEN": .invalidRefreshToken, "REFRESH_TOKEN_REUSED": .refreshTokenReused,
        "REQUIRES_RECENT_LOGIN": .requiresRecentLogin, "MISSING_TOKEN": .missingToken,
        "INVALID_ACCESS_TOKEN": .invalidAccessToken, "ACCESS_TOKEN_EXPIRED": .accessTokenExpired,
        "SESSION_REVOKED": .sessionRevoked, "INVALID_PAGE_TOKEN": .invalidPageToken, "PRODUCT_NOT_FOUND": .productNotFound,
        "ALREADY_IN_BASKET": .alreadyInBasket, "INVALID_COUNT": .invalidCount, "BASKET_FULL": .basketFull,
        "ITEM_NOT_FOUND": .itemNotFound, "VERSION_CONFLICT": .versionConflict, "EMPTY_BASKET": .emptyBasket,
        "PAYMENT_DECLINED": .paymentDeclined, "INVALID_CARD": .invalidCard,
        "IDEMPOTENCY_KEY_REQUIRED": .idempotencyKeyRequired, "IDEMPOTENCY_KEY_REUSED": .idempotencyKeyReused,
        "REQUEST_IN_PROGRESS": .requestInProgress, "ORDER_NOT_FOUND": .orderNotFound,
        "ORDER_NOT_CANCELLABLE": .orderNotCancellable, "MESSAGE_TOO_LARGE": .messageTooLarge,
        "MALFORMED_MESSAGE": .malformedMessage, "UPSTREAM_UNAVAILABLE": .upstreamUnavailable,
    ]

    /// A JSON number that is a whole `Int`, or nil.
    private static func integer(_ value: JSONValue?) -> Int? {
        guard case .number(let number)? = value else { return nil }
        return Int(exactly: number)
    }
}
