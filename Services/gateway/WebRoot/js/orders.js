// The basket page (live), checkout, order history and one order with its cancel.

import { Methods, uuid } from "./api.js";
import * as basket from "./basket.js";
import { h, icon, replace } from "./dom.js";
import { dateTime, describeError, itemCount, money, orderStatus } from "./format.js";
import * as session from "./session.js";
import { busy, emptyState, errorSlot, field, notice, pageTitle, price, productVisual, toast } from "./ui.js";

// ---- the basket

/** `/basket`: the lines, their counts and the total, redrawn whenever the basket changes anywhere. */
export async function basketPage(ctx) {
  ctx.setTitle("Basket");
  if (!basket.current()) await basket.load();
  const body = h("div", { class: "basket-body" });
  const live = h("p", { class: "live", data: { test: "basket-live" }, "aria-live": "polite" });
  const errors = errorSlot("basket-error");
  const render = (current, { status } = {}) => {
    const state = status ?? basket.liveStatus();
    live.dataset.status = state;
    live.textContent = state === "live" ? "Up to date on all your devices" : state === "off" ? "" : "Reconnecting…";
    if (!current) return;
    replace(body, basketContents(current, errors));
  };
  render(basket.current());
  ctx.onLeave(basket.subscribe(render));
  return h("div", { class: "basket-page" }, h("div", { class: "page-head" }, pageTitle("Your basket"), live), errors, body);
}

function basketContents(current, errors) {
  if (!current.items?.length) {
    return h("div", { data: { test: "basket-empty" } },
      emptyState("Your basket is empty", "Find something you like and add it here.",
        h("a", { href: "/", class: "button button-primary", data: { link: "" } }, "Start shopping")));
  }
  return h("div", { class: "basket-layout" },
    h("ul", { class: "lines", data: { test: "basket-lines" } }, current.items.map((item) => basketLine(item, errors))),
    h("aside", { class: "summary", data: { test: "basket-summary" } },
      h("h2", {}, "Summary"),
      h("dl", {},
        h("div", {}, h("dt", {}, "Items"), h("dd", { data: { test: "basket-item-count" } }, String(current.itemCount))),
        h("div", {}, h("dt", {}, "Shipping"), h("dd", {}, "Free")),
        h("div", { class: "total" }, h("dt", {}, "Total"), h("dd", {}, price(current.total, "basket-total")))),
      h("a", { href: "/checkout", class: "button button-primary button-block button-large", data: { link: "", test: "checkout-button" } }, "Checkout")));
}

function basketLine(item, errors) {
  const change = (count) => async (event) => {
    const button = event.currentTarget;
    try {
      button.disabled = true;
      errors.replaceChildren();
      await (count === 0 ? basket.remove(item.id) : basket.setCount(item.id, count));
    } catch (error) {
      errors.replaceChildren(notice("error", describeError(error), { test: "basket-error-notice" }));
      if (error.reason === "VERSION_CONFLICT" || error.reason === "ITEM_NOT_FOUND") basket.load().catch(() => {});
      button.disabled = false;
    }
  };
  const stepper = h("div", { class: "stepper", role: "group", "aria-label": `Quantity of ${item.productTitle}` },
    h("button", { type: "button", "aria-label": "One fewer", disabled: item.count <= 1, data: { test: "line-decrement" }, on: { click: change(item.count - 1) } }, "−"),
    h("span", { class: "count", data: { test: "line-count" }, "aria-live": "polite" }, String(item.count)),
    h("button", { type: "button", "aria-label": "One more", disabled: item.count >= 10, data: { test: "line-increment" }, on: { click: change(item.count + 1) } }, "+"));
  return h("li", { class: "line", data: { test: "basket-line", itemId: item.id, productId: item.productId, count: item.count } },
    h("a", { href: `/products/${item.productId}`, class: "line-visual", data: { link: "" }, tabindex: "-1" }, productVisual(item)),
    h("div", { class: "line-info" },
      h("a", { href: `/products/${item.productId}`, class: "line-title", data: { link: "", test: "line-title" } }, item.productTitle),
      h("p", { class: "muted" }, `${money(item.unitPrice)} each`),
      h("div", { class: "line-actions" }, stepper,
        h("button", { type: "button", class: "link-button", data: { test: "line-remove" }, on: { click: change(0) } }, icon("trash"), "Remove"))),
    h("p", { class: "line-total" }, price(item.lineTotal, "line-total")));
}

// ---- checkout

const COUNTRIES = [
  ["US", "United States"], ["CA", "Canada"], ["GB", "United Kingdom"], ["IE", "Ireland"], ["DE", "Germany"], ["FR", "France"],
  ["NL", "Netherlands"], ["ES", "Spain"], ["IT", "Italy"], ["SE", "Sweden"], ["DK", "Denmark"], ["CH", "Switzerland"],
  ["AU", "Australia"], ["NZ", "New Zealand"], ["JP", "Japan"], ["KR", "South Korea"], ["SG", "Singapore"], ["IN", "India"],
  ["BR", "Brazil"], ["MX", "Mexico"],
];

/**
 * PlaceOrder needs an `idempotency-key` (API.md §6): the same key returns the first answer and
 * never charges twice. A key is kept for a request whose outcome we do not know (the connection
 * broke, the service was briefly down) and sent again with the same request; a new key is made
 * once an answer came back, or the request changed (another card, another address).
 */
let pendingOrder = null; // { body: string, key: string }

function idempotencyKey(request) {
  const body = JSON.stringify(request);
  if (pendingOrder?.body !== body) pendingOrder = { body, key: uuid() };
  return pendingOrder.key;
}

const UNKNOWN_OUTCOME = new Set(["unavailable", "deadline_exceeded", "canceled", "unknown"]);

/** Places the order, retrying while its outcome is unknown (same key: charged at most once). */
async function placeOrder(request) {
  const headers = { "idempotency-key": idempotencyKey(request) };
  for (let attempt = 1; ; attempt++) {
    try {
      const order = await session.call(Methods.placeOrder, request, { headers, timeoutMs: 30000 });
      pendingOrder = null;
      return order;
    } catch (error) {
      const retry = error.reason === "REQUEST_IN_PROGRESS" || UNKNOWN_OUTCOME.has(error.code);
      if (!retry || attempt >= 4) {
        if (!retry) pendingOrder = null;
        throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, 400 * 2 ** attempt));
    }
  }
}

/** "12/30" or "12 / 2030" as {expMonth, expYear}; null when it is no date. */
function parseExpiry(text) {
  const match = /^\s*(\d{1,2})\s*\/\s*(\d{2}|\d{4})\s*$/.exec(text);
  if (!match) return null;
  const month = Number(match[1]);
  const year = match[2].length === 2 ? 2000 + Number(match[2]) : Number(match[2]);
  return month >= 1 && month <= 12 ? { expMonth: month, expYear: year } : null;
}

/** `/checkout`: the address and card form beside the live order summary. */
export async function checkoutPage(ctx) {
  ctx.setTitle("Checkout");
  if (!basket.current()) await basket.load();
  if (!basket.current()?.items?.length) {
    return h("div", {}, pageTitle("Checkout"),
      emptyState("Your basket is empty", "Add some products before checking out.",
        h("a", { href: "/", class: "button button-primary", data: { link: "" } }, "Start shopping")));
  }
  const user = session.user();
  const errors = errorSlot("checkout-error");
  const input = (container) => container.querySelector("input, select");
  const name = field("Full name", { name: "name", autocomplete: "name", required: true, value: user?.displayName ?? "", data: { test: "ship-name" } });
  const line1 = field("Address", { name: "line1", autocomplete: "address-line1", required: true, data: { test: "ship-line1" } });
  const line2 = field("Apartment, suite (optional)", { name: "line2", autocomplete: "address-line2", data: { test: "ship-line2" } });
  const city = field("City", { name: "city", autocomplete: "address-level2", required: true, data: { test: "ship-city" } });
  const postal = field("Postal code", { name: "postalCode", autocomplete: "postal-code", required: true, data: { test: "ship-postal-code" } });
  const country = h("div", { class: "field" }, h("label", { for: "field-country" }, "Country"),
    h("select", { id: "field-country", name: "country", autocomplete: "country", data: { test: "ship-country" }, value: "US" },
      COUNTRIES.map(([code, label]) => h("option", { value: code }, label))));
  const card = field("Card number", { name: "cardNumber", inputmode: "numeric", autocomplete: "cc-number", required: true, placeholder: "1234 1234 1234 1234", data: { test: "card-number" } });
  const expiry = field("Expiry (MM/YY)", { name: "expiry", inputmode: "numeric", autocomplete: "cc-exp", required: true, placeholder: "MM/YY", data: { test: "card-expiry" } });
  const cvc = field("Security code", { name: "cvc", inputmode: "numeric", autocomplete: "cc-csc", required: true, maxlength: "4", placeholder: "CVC", data: { test: "card-cvc" } });
  const pay = h("button", { type: "submit", class: "button button-primary button-block button-large", data: { test: "place-order" } });
  const summary = h("aside", { class: "summary", data: { test: "checkout-summary" } });
  const renderSummary = (current) => {
    if (!current) return;
    replace(pay, icon("lock"), `Pay ${money(current.total)}`);
    replace(summary,
      h("h2", {}, "Order summary"),
      h("ul", { class: "summary-lines" }, current.items.map((item) =>
        h("li", {}, h("span", {}, `${item.count} × ${item.productTitle}`), h("span", {}, money(item.lineTotal))))),
      h("dl", {}, h("div", { class: "total" }, h("dt", {}, "Total"), h("dd", {}, price(current.total, "checkout-total")))));
  };
  renderSummary(basket.current());
  ctx.onLeave(basket.subscribe(renderSummary));

  const form = h("form", { class: "form checkout-form", novalidate: true },
    h("fieldset", {}, h("legend", {}, "Shipping address"), name, line1, line2,
      h("div", { class: "field-row" }, city, postal), country),
    h("fieldset", {}, h("legend", {}, "Payment"),
      h("p", { class: "hint test-cards" }, "This is a test shop: pay with 4242 4242 4242 4242; 4000 0000 0000 0002 is always declined."),
      card, h("div", { class: "field-row" }, expiry, cvc)),
    errors, pay);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const exp = parseExpiry(input(expiry).value);
    const digits = input(card).value.replace(/[\s-]/g, "");
    const missing = [name, line1, city, postal].find((container) => !input(container).value.trim());
    let problem = null;
    if (missing) problem = `Please fill in ${missing.querySelector("label").textContent.toLowerCase()}.`;
    else if (!/^\d{12,19}$/.test(digits)) problem = "Please enter the card number (12 to 19 digits).";
    else if (!exp) problem = "Please enter the card's expiry date as MM/YY.";
    else if (!/^\d{3,4}$/.test(input(cvc).value.trim())) problem = "Please enter the 3 or 4 digit security code.";
    if (problem) return errors.replaceChildren(notice("error", problem, { test: "checkout-error" }));
    const shippingAddress = {
      name: input(name).value.trim(), line1: input(line1).value.trim(), city: input(city).value.trim(),
      postalCode: input(postal).value.trim(), country: input(country).value,
    };
    if (input(line2).value.trim()) shippingAddress.line2 = input(line2).value.trim();
    const request = { shippingAddress, payment: { cardNumber: digits, ...exp, cvc: input(cvc).value.trim() } };
    let order = null;
    const ok = await busy(pay, "Placing your order…", async () => {
      // The basket it empties is ours: loaded before the announcement could say otherwise.
      order = await basket.asOwnChange(async () => {
        const placed = await placeOrder(request);
        if (placed.status === "PAID") await basket.load().catch(() => {});
        return placed;
      });
    }, errors);
    if (ok && order) {
      ctx.navigate(`/orders/${encodeURIComponent(order.id)}?placed=1`);
    }
  });

  return h("div", { class: "checkout" }, pageTitle("Checkout"),
    h("div", { class: "checkout-layout" }, form, summary));
}

// ---- orders

function statusBadge(status) {
  return h("span", { class: `badge badge-${status.toLowerCase().replace(/_/g, "-")}`, data: { test: "order-status", status } }, orderStatus(status));
}

/** "visa" → "Visa", "mastercard" → "Mastercard", "amex" → "American Express". */
function cardBrand(brand = "") {
  const names = { amex: "American Express", visa: "Visa", mastercard: "Mastercard", discover: "Discover", jcb: "JCB" };
  return names[brand.toLowerCase()] ?? (brand ? brand.charAt(0).toUpperCase() + brand.slice(1) : "Card");
}

function countryName(code) {
  return COUNTRIES.find(([known]) => known === code)?.[1] ?? code;
}

function shortId(id) {
  return id.slice(0, 8).toUpperCase();
}

/** `/orders`: newest first, with "Show more". */
export async function ordersPage(ctx) {
  ctx.setTitle("Orders");
  const list = h("ul", { class: "orders", data: { test: "orders-list" } });
  const more = h("div", { class: "more" });
  const show = (answer) => {
    list.append(...(answer.orders ?? []).map((order) => h("li", {},
      h("a", { href: `/orders/${encodeURIComponent(order.id)}`, class: "order-row", data: { link: "", test: "order-row", orderId: order.id, status: order.status } },
        h("div", {}, h("p", { class: "order-number" }, `Order ${shortId(order.id)}`), h("p", { class: "muted" }, dateTime(order.createdAt))),
        h("p", { class: "muted order-items" }, itemCount(order.items.reduce((sum, item) => sum + item.count, 0))),
        statusBadge(order.status),
        h("p", { class: "order-total" }, money(order.total))))));
    more.replaceChildren();
    if (answer.nextPageToken) {
      const button = h("button", { type: "button", class: "button button-secondary" }, "Show more");
      button.addEventListener("click", () => busy(button, "Loading…", async () =>
        show(await session.call(Methods.listOrders, { pageSize: 20, pageToken: answer.nextPageToken }))));
      more.append(button);
    }
  };
  const first = await session.call(Methods.listOrders, { pageSize: 20 });
  if (!(first.orders ?? []).length) {
    return h("div", {}, pageTitle("Your orders"), emptyState("No orders yet", "When you place an order, it shows up here.",
      h("a", { href: "/", class: "button button-primary", data: { link: "" } }, "Start shopping")));
  }
  show(first);
  return h("div", {}, pageTitle("Your orders"), list, more);
}

/** `/orders/:id`: one order; PAID and pending orders can be cancelled. */
export async function orderPage(ctx) {
  let order;
  try {
    order = await session.call(Methods.getOrder, { id: ctx.params.id });
  } catch (error) {
    if (error.reason === "ORDER_NOT_FOUND" || error.code === "not_found") return ctx.notFound("We couldn't find that order.");
    throw error;
  }
  ctx.setTitle(`Order ${shortId(order.id)}`);
  const container = h("div", { class: "order-page", data: { test: "order-page", orderId: order.id } });
  const render = () => replace(container, orderDetails(order, ctx.query.get("placed") === "1", async (button, slot) => {
    const ok = await busy(button, "Cancelling…", async () => { order = await session.call(Methods.cancelOrder, { id: order.id }); }, slot);
    if (ok) {
      toast("Your order has been cancelled.", "success");
      render();
    }
  }));
  render();
  return container;
}

function orderDetails(order, justPlaced, cancel) {
  const address = order.shippingAddress ?? {};
  const cancellable = order.status === "PAID" || order.status === "PENDING";
  const errors = errorSlot("cancel-error");
  const actions = h("div", { class: "actions" });
  if (cancellable) {
    const ask = h("button", { type: "button", class: "button button-secondary", data: { test: "cancel-order" } }, "Cancel order");
    ask.addEventListener("click", () => {
      const confirm = h("button", { type: "button", class: "button button-danger", data: { test: "confirm-cancel" } }, "Yes, cancel this order");
      const keep = h("button", { type: "button", class: "button button-secondary" }, "Keep my order");
      keep.addEventListener("click", () => replace(actions, ask));
      confirm.addEventListener("click", () => cancel(confirm, errors));
      replace(actions, h("p", {}, "Cancel this order? Your payment will be refunded."), confirm, keep);
    });
    actions.append(ask);
  }
  return [
    justPlaced && order.status === "PAID"
      ? notice("success", [h("strong", {}, "Thank you! Your order is confirmed."), " We'll email you when it ships."], { test: "order-confirmation" })
      : null,
    h("div", { class: "page-head" }, pageTitle(`Order ${shortId(order.id)}`, { data: { test: "order-title" } }), statusBadge(order.status)),
    h("p", { class: "muted" }, `Placed ${dateTime(order.createdAt)}`),
    h("div", { class: "order-layout" },
      h("section", {},
        h("h2", {}, "Items"),
        h("ul", { class: "summary-lines" }, order.items.map((item) =>
          h("li", { data: { test: "order-item" } }, h("span", {}, `${item.count} × ${item.productTitle}`), h("span", {}, money(item.lineTotal))))),
        h("dl", {}, h("div", { class: "total" }, h("dt", {}, "Total"), h("dd", {}, price(order.total, "order-total"))))),
      h("section", {},
        h("h2", {}, "Shipping to"),
        h("address", {}, [address.name, address.line1, address.line2, `${address.postalCode ?? ""} ${address.city ?? ""}`.trim(), countryName(address.country)]
          .filter(Boolean).flatMap((line) => [line, h("br")])),
        order.payment ? [h("h2", {}, "Payment"), h("p", {}, `${cardBrand(order.payment.brand)} ending in ${order.payment.last4}`)] : null)),
    errors,
    actions,
    h("p", {}, h("a", { href: "/orders", class: "back-link", data: { link: "" } }, icon("back"), "All orders")),
  ];
}
