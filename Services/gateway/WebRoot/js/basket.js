// The signed-in shopper's basket, kept live: WatchBasket (a Connect server stream) sends the
// basket now and after every change from any device; when the stream ends or breaks it is
// opened again with backoff (0.5 s doubling to 30 s, jittered, reset once a stream delivers).
// Changes made here apply their answer at once; the watch confirms them. A basket is only ever
// replaced by one with a higher version, so a late answer never undoes a newer change.

import { Methods, serverStream } from "./api.js";
import * as session from "./session.js";

let basket = null; // the latest Basket message, or null when signed out / not yet known
let status = "off"; // "off" | "connecting" | "live" | "reconnecting"
let controller = null; // aborts the running watch
let generation = 0; // bumps on every start/stop, so an old loop knows to quit
let pendingChanges = 0; // our own calls in flight
const ownVersions = new Set(); // versions our own calls produced
const listeners = new Set();

/** The current basket (null when unknown). */
export function current() {
  return basket;
}

/** "off", "connecting", "live" or "reconnecting". */
export function liveStatus() {
  return status;
}

/**
 * Calls `listener(basket, {external})` on every new basket and status change; `external` is
 * true when the change came from somewhere else (another device, shopctl). Returns an unsubscribe.
 */
export function subscribe(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function notify(external = false) {
  for (const listener of listeners) listener(basket, { external, status });
}

function setStatus(next) {
  if (status === next) return;
  status = next;
  notify();
}

/** Takes `next` if it is newer than what we have. */
function accept(next, { fromWatch = false } = {}) {
  if (!next || (basket && next.version < basket.version)) return;
  const changed = !basket || next.version !== basket.version;
  const external = fromWatch && basket !== null && changed && pendingChanges === 0 && !ownVersions.has(next.version);
  basket = next;
  if (changed || fromWatch) notify(external);
}

/** Starts watching (after sign-in). */
export function start() {
  stop();
  const mine = ++generation;
  controller = new AbortController();
  watch(mine, controller.signal);
}

/** Stops watching and forgets the basket (after sign-out). */
export function stop() {
  generation++;
  controller?.abort();
  controller = null;
  basket = null;
  ownVersions.clear();
  status = "off";
  notify();
}

async function watch(mine, signal) {
  let attempt = 0;
  setStatus("connecting");
  while (mine === generation && session.isSignedIn()) {
    let delivered = false;
    try {
      const token = await session.accessToken();
      for await (const next of serverStream(Methods.watchBasket, {}, { token, signal })) {
        if (mine !== generation) return;
        delivered = true;
        attempt = 0;
        setStatus("live");
        accept(next, { fromWatch: true });
      }
    } catch (error) {
      if (mine !== generation || signal.aborted) return;
      if (error.reason === "ACCESS_TOKEN_EXPIRED") {
        // The stream was opened with a token that has just expired: renew it, reconnect now.
        await session.refresh().catch(() => {});
        continue;
      }
      session.noteRefusal(error);
      if (!session.isSignedIn()) return;
    }
    if (mine !== generation) return;
    setStatus("reconnecting");
    if (!delivered) attempt++;
    const base = Math.min(30000, 500 * 2 ** Math.min(attempt, 6));
    await sleep(base / 2 + Math.random() * (base / 2), signal);
  }
}

let wake = () => {}; // ends the current wait between two watches early

function sleep(ms, signal) {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      wake = () => {};
      resolve();
    };
    const timer = setTimeout(done, ms);
    wake = done;
    signal.addEventListener("abort", done, { once: true });
  });
}

// Back online: reconnect now rather than when the backoff ends.
window.addEventListener("online", () => wake());

/** Runs one change (AddItem, UpdateItemCount, RemoveItem), applies its answer, and returns it. */
async function change(method, message) {
  pendingChanges++;
  try {
    const next = await session.call(method, message);
    ownVersions.add(next.version);
    accept(next);
    return next;
  } finally {
    pendingChanges--;
  }
}

/**
 * Runs `action` (placing an order) as one of our own changes: the basket it empties is not
 * announced as changed elsewhere.
 */
export async function asOwnChange(action) {
  pendingChanges++;
  try {
    return await action();
  } finally {
    pendingChanges--;
  }
}

/** Loads the basket once (GetBasket), for pages shown before the watch's first message. */
export async function load() {
  const next = await session.call(Methods.getBasket, {});
  accept(next);
  return basket;
}

/** Adds `count` of product `productId`. */
export function add(productId, count = 1) {
  return change(Methods.addItem, { productId, count });
}

/** Sets a line's count (0 removes it), refused with VERSION_CONFLICT if the basket moved meanwhile. */
export function setCount(itemId, count) {
  return change(Methods.updateItemCount, { itemId, count, expectedVersion: basket?.version });
}

/** Removes a line. */
export function remove(itemId) {
  return change(Methods.removeItem, { itemId });
}

/** The line for `productId`, if it is in the basket. */
export function lineFor(productId) {
  return basket?.items?.find((item) => item.productId === productId) ?? null;
}
