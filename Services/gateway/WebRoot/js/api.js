// A Connect protocol client (connectrpc.com/docs/protocol), JSON codec, for the gateway this
// page came from: unary calls as `POST /<service>/<method>` with `application/json`, server
// streams as `application/connect+json` envelopes read through fetch's ReadableStream.
// API.md §9: our stable error reason travels in the `shop-error-reason` header and in a
// `shop.v1.ErrorReason` detail, so callers branch on `error.reason`, never on the message.

/** A failed call: `code` is Connect's (`not_found`, …), `reason` ours (`PRODUCT_NOT_FOUND`) or "". */
export class ConnectError extends Error {
  constructor(code, message, { reason = "", details = [], status = 0 } = {}) {
    super(message || code);
    this.name = "ConnectError";
    this.code = code;
    this.reason = reason;
    this.details = details;
    this.status = status;
  }
}

/** The default deadline of a unary call (`connect-timeout-ms`); the gateway's own is 10 s. */
const UNARY_TIMEOUT_MS = 15000;

/**
 * Calls `method` ("shop.catalog.v1.CatalogService/GetProduct") with `message`; resolves to the
 * response message or rejects with a ConnectError. `token` adds `authorization: Bearer …`;
 * `headers` adds more (`idempotency-key`). `get`: as Connect's GET (`?encoding=json&message=…`),
 * for reads without side effects — the gateway lets the browser keep anonymous catalog reads
 * for a minute.
 */
export async function unary(method, message = {}, { token, headers = {}, signal, timeoutMs = UNARY_TIMEOUT_MS, get = false } = {}) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new ConnectError("deadline_exceeded", "timed out")), timeoutMs + 2000);
  const abort = () => controller.abort(signal.reason);
  signal?.addEventListener("abort", abort, { once: true });
  try {
    let response;
    try {
      const common = {
        "connect-timeout-ms": String(timeoutMs),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...headers,
      };
      const query = `?connect=v1&encoding=json&message=${encodeURIComponent(JSON.stringify(message))}`;
      response = await fetch(get ? `/${method}${query}` : `/${method}`, {
        method: get ? "GET" : "POST",
        headers: get ? common : { "content-type": "application/json", "connect-protocol-version": "1", ...common },
        body: get ? undefined : JSON.stringify(message),
        signal: controller.signal,
        cache: get ? "default" : "no-store",
        credentials: "omit",
      });
    } catch (error) {
      throw transportError(error, controller.signal);
    }
    const text = await response.text().catch(() => "");
    if (!response.ok) throw errorFromResponse(response, text);
    try {
      return text ? JSON.parse(text) : {};
    } catch {
      throw new ConnectError("internal", "the answer is not JSON", { status: response.status });
    }
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", abort);
  }
}

/**
 * Calls the server-streaming `method`; an async iterator of the response messages. It ends
 * when the server ends the stream with success, and throws a ConnectError when the stream ends
 * with an error or the connection breaks. Abort `signal` to stop.
 */
export async function* serverStream(method, message = {}, { token, headers = {}, signal } = {}) {
  let response;
  try {
    response = await fetch(`/${method}`, {
      method: "POST",
      headers: {
        "content-type": "application/connect+json",
        "connect-protocol-version": "1",
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...headers,
      },
      body: envelope(0, new TextEncoder().encode(JSON.stringify(message))),
      signal,
      cache: "no-store",
      credentials: "omit",
    });
  } catch (error) {
    throw transportError(error, signal);
  }
  if (!response.ok) throw errorFromResponse(response, await response.text().catch(() => ""));
  if (!(response.headers.get("content-type") ?? "").startsWith("application/connect+json")) {
    throw new ConnectError("internal", "unexpected content type", { status: response.status });
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = new Uint8Array(0);
  try {
    for (;;) {
      // One envelope: a flags byte, a 4-byte big-endian length, the JSON.
      while (buffer.length >= 5) {
        const length = new DataView(buffer.buffer, buffer.byteOffset, 5).getUint32(1);
        if (buffer.length < 5 + length) break;
        const flags = buffer[0];
        const payload = decoder.decode(buffer.subarray(5, 5 + length));
        buffer = buffer.slice(5 + length);
        if (flags & 0x01) throw new ConnectError("internal", "compressed message without negotiation");
        if (flags & 0x02) {
          const end = parseJSON(payload || "{}");
          if (end.error) throw errorFromJSON(end.error, endStreamReason(end), response.status);
          return;
        }
        yield parseJSON(payload);
      }
      let chunk;
      try {
        chunk = await reader.read();
      } catch (error) {
        throw transportError(error, signal);
      }
      if (chunk.done) throw new ConnectError("unavailable", "the stream ended without its end message");
      const joined = new Uint8Array(buffer.length + chunk.value.length);
      joined.set(buffer);
      joined.set(chunk.value, buffer.length);
      buffer = joined;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

/** A message's JSON, or a ConnectError saying it was none. */
function parseJSON(text) {
  try {
    return JSON.parse(text);
  } catch {
    throw new ConnectError("internal", "a stream message is not JSON");
  }
}

/** A Connect envelope: flags, length, payload. */
function envelope(flags, payload) {
  const framed = new Uint8Array(5 + payload.length);
  const view = new DataView(framed.buffer);
  view.setUint8(0, flags);
  view.setUint32(1, payload.length);
  framed.set(payload, 5);
  return framed;
}

/** A fetch that failed before an answer: aborted by us, timed out, or no connection. */
function transportError(error, signal) {
  if (error instanceof ConnectError) return error;
  if (signal?.aborted) {
    const reason = signal.reason;
    return reason instanceof ConnectError ? reason : new ConnectError("canceled", "canceled");
  }
  return new ConnectError("unavailable", "network error");
}

/** The error a non-200 unary answer carries (Connect's JSON error, or just an HTTP status). */
function errorFromResponse(response, text) {
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  const headerReason = response.headers.get("shop-error-reason") ?? "";
  if (json && typeof json.code === "string") return errorFromJSON(json, headerReason, response.status);
  return new ConnectError(codeForHTTPStatus(response.status), `HTTP ${response.status}`, {
    reason: headerReason,
    status: response.status,
  });
}

/** A ConnectError from the JSON error object; the reason from the header, else from a detail. */
function errorFromJSON(json, headerReason, status) {
  const details = Array.isArray(json.details) ? json.details : [];
  const detail = details.find((item) => item?.type === "shop.v1.ErrorReason");
  const reason = headerReason || detail?.debug?.reason || "";
  return new ConnectError(json.code ?? "unknown", json.message ?? "", { reason, details, status });
}

/** A reason in an end-stream message's metadata (`{"shop-error-reason": ["…"]}`), if any. */
function endStreamReason(end) {
  const values = end.metadata?.["shop-error-reason"];
  return Array.isArray(values) ? values[0] ?? "" : "";
}

/** Connect's mapping of an HTTP status without a Connect error body to a code. */
function codeForHTTPStatus(status) {
  switch (status) {
    case 400: return "internal";
    case 401: return "unauthenticated";
    case 403: return "permission_denied";
    case 404: return "unimplemented";
    case 429: case 502: case 503: case 504: return "unavailable";
    default: return "unknown";
  }
}

/** A random version-4 UUID (crypto.randomUUID exists only on https or localhost). */
export function uuid() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = [...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The method paths the storefront calls (API.md §3–§7). */
export const Methods = {
  signUp: "shop.auth.v1.AuthService/SignUp",
  resendVerification: "shop.auth.v1.AuthService/ResendVerification",
  signIn: "shop.auth.v1.AuthService/SignIn",
  refreshSession: "shop.auth.v1.AuthService/RefreshSession",
  signOut: "shop.auth.v1.AuthService/SignOut",
  requestPasswordReset: "shop.auth.v1.AuthService/RequestPasswordReset",
  listProducts: "shop.catalog.v1.CatalogService/ListProducts",
  listCategories: "shop.catalog.v1.CatalogService/ListCategories",
  addFavorite: "shop.catalog.v1.CatalogService/AddFavorite",
  removeFavorite: "shop.catalog.v1.CatalogService/RemoveFavorite",
  listFavorites: "shop.catalog.v1.CatalogService/ListFavorites",
  getBasket: "shop.basket.v1.BasketService/GetBasket",
  addItem: "shop.basket.v1.BasketService/AddItem",
  updateItemCount: "shop.basket.v1.BasketService/UpdateItemCount",
  removeItem: "shop.basket.v1.BasketService/RemoveItem",
  watchBasket: "shop.basket.v1.BasketService/WatchBasket",
  placeOrder: "shop.order.v1.OrderService/PlaceOrder",
  getOrder: "shop.order.v1.OrderService/GetOrder",
  listOrders: "shop.order.v1.OrderService/ListOrders",
  cancelOrder: "shop.order.v1.OrderService/CancelOrder",
  getProductPage: "shop.gateway.v1.StorefrontService/GetProductPage",
};
