// Words for people: prices, dates, order states, and every error as a sentence. A shopper
// never sees a status code or a reason name; an error this page does not know gets the
// sentence of its Connect code.

/** Our stable reasons (API.md §3–§7) as sentences. */
const REASONS = {
  // Accounts
  INVALID_EMAIL: "That doesn't look like an email address.",
  WEAK_PASSWORD:
    "Please choose a stronger password: at least 8 characters, not your email address, and not a commonly used password.",
  EMAIL_ALREADY_IN_USE: "An account with this email already exists. Sign in instead, or reset your password.",
  INVALID_CREDENTIALS: "The email or password is not right.",
  EMAIL_NOT_VERIFIED: "Please verify your email address first. We've just sent you a new link.",
  TOO_MANY_ATTEMPTS: "Too many sign-in attempts. Please wait a few minutes and try again.",
  INVALID_TOKEN: "This link is not valid. Please ask for a new one.",
  TOKEN_EXPIRED: "This link has expired. Please ask for a new one.",
  INVALID_REFRESH_TOKEN: "Your session has ended. Please sign in again.",
  REFRESH_TOKEN_REUSED: "Your session has ended. Please sign in again.",
  SESSION_REVOKED: "Your session has ended. Please sign in again.",
  INVALID_ACCESS_TOKEN: "Your session has ended. Please sign in again.",
  ACCESS_TOKEN_EXPIRED: "Your session has ended. Please sign in again.",
  MISSING_TOKEN: "Please sign in first.",
  RATE_LIMITED: "You're going a little fast. Please wait a moment and try again.",
  OVERLOADED: "We're very busy right now. Please try again in a moment.",
  // Catalog
  PRODUCT_NOT_FOUND: "This product is no longer available.",
  INVALID_PAGE_TOKEN: "The list changed while you were browsing. Please start again from the first page.",
  QUERY_TOO_LONG: "That search is too long. Try fewer words.",
  INVALID_CATEGORY: "That category doesn't exist.",
  // Basket
  ALREADY_IN_BASKET: "This product is already in your basket. You can change the quantity there.",
  INVALID_COUNT: "You can have between 1 and 10 of each product in your basket.",
  BASKET_FULL: "Your basket is full. Remove something before adding more.",
  OUT_OF_STOCK: "Sorry, there isn't enough of this in stock.",
  ITEM_NOT_FOUND: "That item is no longer in your basket.",
  VERSION_CONFLICT: "Your basket changed on another device. We've refreshed it; please try again.",
  // Orders
  EMPTY_BASKET: "Your basket is empty. Add some products first.",
  PAYMENT_DECLINED: "Your card was declined. Nothing was charged and your basket is unchanged. Please try another card.",
  INVALID_CARD: "Please check the card number, expiry date and security code.",
  INVALID_ADDRESS: "Please check the shipping address.",
  IDEMPOTENCY_KEY_REUSED: "Something went wrong placing your order. Please try again.",
  REQUEST_IN_PROGRESS: "Your order is still being placed. Please wait a moment.",
  ORDER_NOT_FOUND: "We couldn't find that order.",
  ORDER_NOT_CANCELLABLE: "This order can no longer be cancelled.",
  // The gateway
  UPSTREAM_UNAVAILABLE: "Part of the shop is briefly unavailable. Please try again in a moment.",
  TOO_MANY_WATCHES: "The shop is open in too many windows. Close some and reload this one.",
};

/** Connect codes as sentences, for errors without a known reason. */
const CODES = {
  canceled: "The request was cancelled.",
  deadline_exceeded: "That took too long. Please try again.",
  unavailable: "We can't reach the shop right now. Check your connection and try again.",
  resource_exhausted: "You're going a little fast. Please wait a moment and try again.",
  unauthenticated: "Please sign in again.",
  permission_denied: "You're not allowed to do that.",
  not_found: "We couldn't find that.",
  invalid_argument: "Please check what you entered.",
  failed_precondition: "That can't be done right now.",
  aborted: "Something changed meanwhile. Please try again.",
  already_exists: "That already exists.",
};

/** An error (ConnectError or anything thrown) as one sentence for the shopper. */
export function describeError(error) {
  if (error?.reason && REASONS[error.reason]) return REASONS[error.reason];
  if (error?.code && CODES[error.code]) return CODES[error.code];
  return "Something went wrong on our side. Please try again.";
}

/** A Money message ({amount in minor units, currency}) as "$12.99". */
export function money(value) {
  if (!value) return "";
  const currency = value.currency || "USD";
  try {
    const format = new Intl.NumberFormat(undefined, { style: "currency", currency });
    const digits = format.resolvedOptions().maximumFractionDigits;
    return format.format(Number(value.amount) / 10 ** digits);
  } catch {
    return `${(Number(value.amount) / 100).toFixed(2)} ${currency}`;
  }
}

/** An RFC 3339 time as "27 Nov 2026, 13:35". */
export function dateTime(text) {
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) return "";
  return date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

/** An order's status for people. */
export function orderStatus(status) {
  return { PAID: "Paid", PAYMENT_FAILED: "Payment failed", CANCELLED: "Cancelled", PENDING: "Processing" }[status] ?? "Processing";
}

/** "3 items" / "1 item". */
export function itemCount(count) {
  return `${count} ${count === 1 ? "item" : "items"}`;
}

/** A category name for a heading: "men's clothing" → "Men's clothing". */
export function categoryName(name) {
  return name ? name.charAt(0).toUpperCase() + name.slice(1) : "";
}
