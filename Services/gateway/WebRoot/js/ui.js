// The pieces every page is built from: product pictures and cards, form fields, notices,
// buttons that show they are busy, toasts.

import { h, icon } from "./dom.js";
import { categoryName, describeError, money } from "./format.js";

/**
 * A product's picture: its image when the shop serves it from this origin (the CSP allows no
 * other), else a tile coloured by category with the product's initials.
 */
export function productVisual(product, { large = false } = {}) {
  const title = product.title ?? product.productTitle ?? "";
  const image = product.image ?? product.imageURL ?? "";
  const classes = `visual${large ? " visual-large" : ""}`;
  if (image.startsWith("/") && !image.startsWith("//")) {
    return h("div", { class: classes }, h("img", { src: image, alt: title, loading: "lazy", decoding: "async" }));
  }
  const initials = title.split(/\s+/).filter(Boolean).slice(0, 2).map((word) => word[0].toUpperCase()).join("");
  return h(
    "div",
    { class: `${classes} tile hue-${hue(product.category ?? title)}`, role: "img", "aria-label": title },
    h("span", { class: "tile-initials", "aria-hidden": "true" }, initials),
    large && product.category ? h("span", { class: "tile-category", "aria-hidden": "true" }, categoryName(product.category)) : null,
  );
}

/** One of eight hues for `text`, the same every time. */
function hue(text) {
  let sum = 0;
  for (const char of String(text)) sum = (sum * 31 + char.codePointAt(0)) % 9973;
  return sum % 8;
}

/** "★ 4.6 (120)" with a label a screen reader can say. */
export function rating(value) {
  if (!value || !value.count) return h("span", { class: "rating rating-none" }, "No reviews yet");
  const rate = Number(value.rate).toFixed(1);
  return h(
    "span",
    { class: "rating", "aria-label": `Rated ${rate} out of 5 by ${value.count} ${value.count === 1 ? "shopper" : "shoppers"}` },
    icon("star"),
    h("span", { "aria-hidden": "true" }, `${rate} (${value.count})`),
  );
}

/** A stock note: "In stock", "Only 3 left", "Out of stock". */
export function stockNote(stock) {
  if (stock <= 0) return h("p", { class: "stock stock-out", data: { test: "stock" } }, "Out of stock");
  if (stock <= 5) return h("p", { class: "stock stock-low", data: { test: "stock" } }, `Only ${stock} left`);
  return h("p", { class: "stock", data: { test: "stock" } }, "In stock");
}

/** A labelled input. `attributes` go to the <input>. */
export function field(label, attributes, { hint } = {}) {
  const id = attributes.id ?? `field-${attributes.name}`;
  const hintId = hint ? `${id}-hint` : null;
  return h(
    "div",
    { class: "field" },
    h("label", { for: id }, label),
    h("input", { id, "aria-describedby": hintId, ...attributes }),
    hint ? h("p", { class: "hint", id: hintId }, hint) : null,
  );
}

/** A notice box: kind "error", "success" or "info". */
export function notice(kind, children, { test } = {}) {
  return h(
    "div",
    { class: `notice notice-${kind}`, role: kind === "error" ? "alert" : "status", data: { test } },
    icon(kind === "error" ? "alert" : kind === "success" ? "check" : "info"),
    h("div", { class: "notice-body" }, children),
  );
}

/** An empty state with a message and an action. */
export function emptyState(title, text, action) {
  return h("div", { class: "empty" }, icon("bag"), h("h2", {}, title), text ? h("p", {}, text) : null, action);
}

/** A page's heading (focused after navigation, for screen readers). */
export function pageTitle(text, attributes = {}) {
  return h("h1", { class: "page-title", tabindex: "-1", ...attributes }, text);
}

/**
 * Runs `action` with `button` disabled and showing `busyText`; shows the error in `errorSlot`
 * (as words) when it fails, and returns whether it succeeded.
 */
export async function busy(button, busyText, action, errorSlot) {
  const label = button.textContent;
  button.disabled = true;
  button.setAttribute("aria-busy", "true");
  if (busyText) button.textContent = busyText;
  errorSlot?.replaceChildren();
  try {
    await action();
    return true;
  } catch (error) {
    if (errorSlot) errorSlot.replaceChildren(notice("error", describeError(error), { test: errorSlot.dataset.errorTest }));
    else toast(describeError(error), "error");
    return false;
  } finally {
    if (button.isConnected) {
      button.disabled = false;
      button.removeAttribute("aria-busy");
      if (busyText) button.textContent = label;
    }
  }
}

/** A place for a form's error, whose notice gets data-test `test`. */
export function errorSlot(test) {
  return h("div", { class: "error-slot", data: { errorTest: test } });
}

/** Shows a short message at the bottom of the screen for a few seconds (once, however often it is said). */
export function toast(message, kind = "info") {
  const region = document.getElementById("toasts");
  if (!region) return;
  const same = [...region.children].find((item) => item.textContent === message && !item.classList.contains("toast-leaving"));
  const item = same ?? h("div", { class: `toast toast-${kind}`, data: { test: "toast" } }, message);
  clearTimeout(Number(item.dataset.timer));
  if (!same) region.append(item);
  while (region.children.length > 3) region.firstElementChild.remove();
  item.dataset.timer = String(setTimeout(() => {
    item.classList.add("toast-leaving");
    setTimeout(() => item.remove(), 400);
  }, 4000));
}

/** A price, with the class the layout styles. */
export function price(value, test) {
  return h("span", { class: "price", data: { test } }, money(value));
}

/** A skeleton while a page loads. */
export function loading(text = "Loading…") {
  return h("div", { class: "loading", role: "status" }, h("span", { class: "spinner", "aria-hidden": "true" }), text);
}
