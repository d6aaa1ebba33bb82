// The signed-in session: tokens kept in this module's memory only (never localStorage or a
// cookie, where another script or a shared machine could find them), renewed through
// RefreshSession before the access token expires and whenever a call is refused with
// ACCESS_TOKEN_EXPIRED. Refresh tokens rotate on every use and presenting an old one revokes the
// whole session (API.md §3), so at most one refresh is ever in flight.

import { ConnectError, Methods, unary } from "./api.js";

let current = null; // { accessToken, refreshToken, expiresAt (ms), user }
let refreshing = null; // the refresh in flight
let refreshTimer = 0;
const listeners = new Set();

/** Reasons that mean the session is over: sign in again. */
const ENDED = new Set(["SESSION_REVOKED", "INVALID_ACCESS_TOKEN", "INVALID_REFRESH_TOKEN", "REFRESH_TOKEN_REUSED", "MISSING_TOKEN"]);

/** The signed-in user, or null. */
export function user() {
  return current?.user ?? null;
}

/** Whether someone is signed in. */
export function isSignedIn() {
  return current !== null;
}

/** Calls `method`, a public read that is the same for everyone, anonymously as a cacheable GET. */
export function read(method, message = {}) {
  return unary(method, message, { get: true });
}

/** Calls `listener(user, why)` after every sign-in, sign-out or end of the session; returns an unsubscribe. */
export function onChange(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function notify(why) {
  for (const listener of listeners) listener(user(), why);
}

/** Takes a Session message (SignIn, RefreshSession) as the current session. */
function adopt(session, why) {
  const lifetime = Math.max(30, Number(session.expiresIn) || 900) * 1000;
  current = {
    accessToken: session.accessToken,
    refreshToken: session.refreshToken,
    expiresAt: Date.now() + lifetime,
    user: session.user,
  };
  // Renew at 80 % of the lifetime (12 of 15 minutes), well before the gateway would refuse it.
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(() => refresh().catch(() => {}), lifetime * 0.8);
  notify(why);
}

/** Forgets the session; `why` is "signed-out" (asked for) or "ended" (revoked, expired). */
function forget(why) {
  if (!current) return;
  current = null;
  clearTimeout(refreshTimer);
  notify(why);
}

/** SignIn: resolves when signed in, rejects with the ConnectError otherwise. */
export async function signIn(email, password) {
  adopt(await unary(Methods.signIn, { email, password }), "signed-in");
}

/** SignOut of this session (scope local); the session is forgotten even when the call fails. */
export async function signOut() {
  const token = current?.accessToken;
  forget("signed-out");
  if (token) await unary(Methods.signOut, { scope: "local" }, { token }).catch(() => {});
}

/**
 * Renews the session with its refresh token, once however many callers ask at the same time.
 * A refused refresh ends the session; a network failure keeps it (and retries in 15 s).
 */
export function refresh() {
  if (!current) return Promise.reject(new ConnectError("unauthenticated", "not signed in", { reason: "MISSING_TOKEN" }));
  if (refreshing) return refreshing;
  const presented = current.refreshToken;
  refreshing = unary(Methods.refreshSession, { refreshToken: presented })
    .then((session) => {
      if (current?.refreshToken === presented) adopt(session, "refreshed");
    })
    .catch((error) => {
      if (error.code === "unauthenticated" || ENDED.has(error.reason)) {
        forget("ended");
      } else if (current) {
        clearTimeout(refreshTimer);
        refreshTimer = setTimeout(() => refresh().catch(() => {}), 15000);
      }
      throw error;
    })
    .finally(() => {
      refreshing = null;
    });
  return refreshing;
}

/** A usable access token: renewed first when it expires within a minute. */
export async function accessToken() {
  if (!current) throw new ConnectError("unauthenticated", "not signed in", { reason: "MISSING_TOKEN" });
  if (current.expiresAt - Date.now() < 60000) await refresh();
  return current.accessToken;
}

/**
 * Calls `method` as the signed-in user: with a fresh token, renewed and retried once when the
 * gateway says ACCESS_TOKEN_EXPIRED (a clock that drifted, a laptop that slept), and the session
 * ended when the token is no longer any good. `optional`: when signed out, call anonymously, as
 * a GET a browser may cache (the methods that take `optional` are reads).
 */
export async function call(method, message = {}, { optional = false, headers = {}, timeoutMs } = {}) {
  if (!current && optional) return unary(method, message, { headers, timeoutMs, get: true });
  const attempt = async (token) => {
    try {
      return await unary(method, message, { token, headers, timeoutMs });
    } catch (error) {
      if (error.reason !== "ACCESS_TOKEN_EXPIRED") noteRefusal(error);
      throw error;
    }
  };
  const token = await accessToken();
  try {
    return await attempt(token);
  } catch (error) {
    if (error.reason !== "ACCESS_TOKEN_EXPIRED" || !current) throw error;
    if (current.accessToken === token) await refresh();
    if (!current) throw error;
    return attempt(current.accessToken);
  }
}

/** Ends the session when `error` says the token can no longer be used. */
export function noteRefusal(error) {
  if (error?.code === "unauthenticated" && ENDED.has(error.reason)) forget("ended");
}
