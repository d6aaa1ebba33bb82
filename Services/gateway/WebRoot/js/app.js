// The storefront's shell: client-side routes (the gateway answers any path without a dot with
// index.html), the header with the live basket count, and what happens when the session
// starts or ends.

import { forgotPasswordPage, signInPage, signUpPage } from "./account.js";
import * as basket from "./basket.js";
import { catalogPage, favoritesPage, productPage, resetFavorites } from "./catalog.js";
import { h, icon, replace } from "./dom.js";
import { describeError } from "./format.js";
import { basketPage, checkoutPage, orderPage, ordersPage } from "./orders.js";
import * as session from "./session.js";
import { loading, pageTitle, toast } from "./ui.js";

const ROUTES = [
  { name: "catalog", pattern: /^\/$/, view: catalogPage },
  { name: "product", pattern: /^\/products\/(?<id>\d+)$/, view: productPage },
  { name: "signin", pattern: /^\/signin$/, view: signInPage, guest: true },
  { name: "signup", pattern: /^\/signup$/, view: signUpPage, guest: true },
  { name: "forgot-password", pattern: /^\/forgot-password$/, view: forgotPasswordPage },
  { name: "favorites", pattern: /^\/favorites$/, view: favoritesPage, signedIn: "favorites" },
  { name: "basket", pattern: /^\/basket$/, view: basketPage, signedIn: "basket" },
  { name: "checkout", pattern: /^\/checkout$/, view: checkoutPage, signedIn: "checkout" },
  { name: "orders", pattern: /^\/orders$/, view: ordersPage, signedIn: "orders" },
  { name: "order", pattern: /^\/orders\/(?<id>[^/]+)$/, view: orderPage, signedIn: "orders" },
];

const main = document.getElementById("main");
const nav = document.getElementById("account-nav");
const searchForm = document.getElementById("search-form");
const searchInput = document.getElementById("search-input");

let generation = 0;
let leaving = [];

/** Goes to `path` (pushing history, or replacing the entry) and draws it. */
function navigate(path, { replace: replaceEntry = false } = {}) {
  if (replaceEntry) history.replaceState(null, "", path);
  else history.pushState(null, "", path);
  render({ scroll: !replaceEntry });
}

/** Sends the shopper to sign in, back here afterwards; `why` is a key of account.js's SIGN_IN_REASONS. */
function signInFirst(why) {
  const here = location.pathname + location.search;
  navigate(`/signin?next=${encodeURIComponent(here)}&why=${encodeURIComponent(why)}`);
}

/** Draws the page of the current address. */
async function render({ scroll = true } = {}) {
  const mine = ++generation;
  for (const leave of leaving) leave();
  leaving = [];
  const mineLeaving = [];
  const url = new URL(location.href);
  const route = ROUTES.find((candidate) => candidate.pattern.test(url.pathname));
  const params = route ? url.pathname.match(route.pattern).groups ?? {} : {};
  searchInput.value = url.pathname === "/" ? url.searchParams.get("q") ?? "" : "";

  if (route?.signedIn && !session.isSignedIn()) {
    return navigate(`/signin?next=${encodeURIComponent(url.pathname + url.search)}&why=${encodeURIComponent(route.signedIn)}`, { replace: true });
  }
  if (route?.guest && session.isSignedIn()) return navigate("/", { replace: true });

  const context = {
    params: Object.fromEntries(Object.entries(params).map(([key, value]) => [key, decodeURIComponent(value)])),
    query: url.searchParams,
    navigate,
    signInFirst,
    setTitle: (title) => { document.title = title ? `${title} · Storefront` : "Storefront"; },
    onLeave: (action) => { mineLeaving.push(action); },
    notFound: (text) => notFoundView(text),
  };
  context.setTitle("");
  const slow = setTimeout(() => { if (mine === generation) replace(main, loading()); }, 150);
  let view;
  try {
    view = route ? await route.view(context) : notFoundView();
  } catch (error) {
    view = errorView(error);
  }
  clearTimeout(slow);
  if (mine !== generation) {
    for (const leave of mineLeaving) leave();
    return;
  }
  leaving = mineLeaving;
  document.body.dataset.route = route?.name ?? "not-found";
  replace(main, view);
  if (scroll) window.scrollTo(0, 0);
  main.querySelector("h1")?.focus({ preventScroll: true });
  document.documentElement.dataset.ready = "true";
}

function notFoundView(text = "We couldn't find that page.") {
  document.title = "Not found · Storefront";
  return h("div", { class: "empty", data: { test: "not-found" } }, icon("box"), pageTitle("Not found"), h("p", {}, text),
    h("a", { href: "/", class: "button button-primary", data: { link: "" } }, "Back to the shop"));
}

function errorView(error) {
  session.noteRefusal(error);
  const retry = h("button", { type: "button", class: "button button-primary" }, "Try again");
  retry.addEventListener("click", () => render({ scroll: false }));
  return h("div", { class: "empty", data: { test: "page-error" } }, icon("alert"), pageTitle("Something went wrong"),
    h("p", {}, describeError(error)), retry);
}

// ---- the header

function renderNav() {
  const user = session.user();
  const count = basket.current()?.itemCount ?? 0;
  const basketLink = h("a", { href: "/basket", class: "nav-link nav-basket", data: { link: "", test: "nav-basket" }, "aria-label": `Basket, ${count} ${count === 1 ? "item" : "items"}` },
    icon("bag"), h("span", { class: "nav-label" }, "Basket"),
    h("span", { class: "badge-count", data: { test: "basket-count" }, hidden: !user || count === 0 }, String(count)));
  if (!user) {
    return replace(nav,
      h("a", { href: "/signin", class: "nav-link", data: { link: "", test: "nav-signin" }, "aria-label": "Sign in" }, icon("user"), h("span", { class: "nav-label" }, "Sign in")),
      basketLink);
  }
  const signOut = h("button", { type: "button", class: "menu-item", data: { test: "nav-signout" } }, "Sign out");
  signOut.addEventListener("click", async () => {
    menu.open = false;
    await session.signOut();
  });
  const name = user.displayName || user.email.split("@")[0];
  const menu = h("details", { class: "account-menu", data: { test: "account-menu" } },
    h("summary", { class: "nav-link", "aria-label": `Your account, ${name}` }, icon("user"),
      h("span", { class: "nav-label", data: { test: "user-name" } }, `Hi, ${name}`)),
    h("div", { class: "menu" },
      h("p", { class: "menu-who" }, "Signed in as", h("br"), h("strong", {}, user.email)),
      h("a", { href: "/orders", class: "menu-item", data: { link: "" } }, "Your orders"),
      h("a", { href: "/favorites", class: "menu-item", data: { link: "" } }, "Favorites"),
      signOut));
  replace(nav,
    h("a", { href: "/favorites", class: "nav-link", data: { link: "", test: "nav-favorites" }, "aria-label": "Favorites" }, icon("heart"), h("span", { class: "nav-label" }, "Favorites")),
    h("a", { href: "/orders", class: "nav-link", data: { link: "", test: "nav-orders" }, "aria-label": "Orders" }, icon("box"), h("span", { class: "nav-label" }, "Orders")),
    basketLink,
    menu);
}

// ---- wiring

session.onChange((user, why) => {
  if (why === "refreshed") return;
  resetFavorites();
  if (user) basket.start();
  else basket.stop();
  renderNav();
  if (why === "signed-out") {
    toast("You're signed out. See you soon!");
    navigate("/");
  } else if (why === "ended") {
    toast("Your session has ended. Please sign in again.", "error");
    const route = ROUTES.find((candidate) => candidate.pattern.test(location.pathname));
    if (route?.signedIn) render({ scroll: false });
  }
});

basket.subscribe((_, { external }) => {
  const badge = nav.querySelector("[data-test=basket-count]");
  const count = basket.current()?.itemCount ?? 0;
  if (badge) {
    badge.textContent = String(count);
    badge.hidden = !session.isSignedIn() || count === 0;
    badge.closest("a").setAttribute("aria-label", `Basket, ${count} ${count === 1 ? "item" : "items"}`);
  }
  if (external) toast("Your basket was updated on another device.");
});

searchForm.addEventListener("submit", (event) => {
  event.preventDefault();
  const query = searchInput.value.trim();
  navigate(query ? `/?q=${encodeURIComponent(query)}` : "/");
});

document.addEventListener("click", (event) => {
  for (const open of document.querySelectorAll("details.account-menu[open]")) {
    if (!open.contains(event.target) || event.target.closest?.("a")) open.open = false;
  }
  const link = event.target.closest?.("a[data-link]");
  if (!link || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  const target = link.getAttribute("href");
  if (target !== location.pathname + location.search) navigate(target);
});

window.addEventListener("popstate", () => render({ scroll: false }));

renderNav();
render();
