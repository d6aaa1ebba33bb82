// Browsing: the product grid with search, sort and categories, the product page, favorites.

import { Methods } from "./api.js";
import * as basket from "./basket.js";
import { h, icon, replace } from "./dom.js";
import { categoryName } from "./format.js";
import * as session from "./session.js";
import { busy, emptyState, pageTitle, price, productVisual, rating, stockNote, toast } from "./ui.js";

const PAGE_SIZE = 24;
const SORTS = [
  ["RELEVANCE", "Featured"],
  ["PRICE_ASC", "Price: low to high"],
  ["PRICE_DESC", "Price: high to low"],
  ["RATING", "Top rated"],
];

// ---- favorites, known for the signed-in shopper so every heart shows its state

let favoriteIds = new Set();
let favoritesLoaded = null;

/** Forgets (sign-out) or loads (sign-in) the shopper's favorites. */
export function resetFavorites() {
  favoriteIds = new Set();
  favoritesLoaded = null;
  if (session.isSignedIn()) loadFavoriteIds().catch(() => {});
}

function loadFavoriteIds() {
  favoritesLoaded ??= session.call(Methods.listFavorites, { pageSize: 100 }).then((answer) => {
    favoriteIds = new Set((answer.products ?? []).map((product) => product.id));
  });
  return favoritesLoaded;
}

/** A heart that saves or forgets `product`. */
function favoriteButton(product, ctx, { withLabel = false } = {}) {
  const button = h("button", {
    type: "button",
    class: withLabel ? "button button-secondary favorite" : "favorite-icon",
    data: { test: "favorite-toggle", productId: product.id },
  });
  const render = () => {
    const saved = favoriteIds.has(product.id);
    button.setAttribute("aria-pressed", String(saved));
    button.setAttribute("aria-label", saved ? `Remove ${product.title} from favorites` : `Save ${product.title} to favorites`);
    button.classList.toggle("is-saved", saved);
    replace(button, icon("heart"), withLabel ? (saved ? "Saved" : "Save") : null);
  };
  button.addEventListener("click", async () => {
    if (!session.isSignedIn()) return ctx.signInFirst("favorite");
    const saved = favoriteIds.has(product.id);
    await busy(button, null, async () => {
      await session.call(saved ? Methods.removeFavorite : Methods.addFavorite, { productId: product.id });
      if (saved) favoriteIds.delete(product.id);
      else favoriteIds.add(product.id);
      toast(saved ? "Removed from your favorites." : "Saved to your favorites.");
    });
    render();
  });
  render();
  if (session.isSignedIn()) loadFavoriteIds().then(render, () => {});
  return button;
}

/** "Add to basket", or "In basket (2)" once it is there; kept current by the live basket. */
function basketButton(product, ctx, { count = () => 1, large = false } = {}) {
  const slot = h("div", { class: "basket-slot" });
  const render = () => {
    const line = basket.lineFor(product.id);
    if (line) {
      return replace(slot, h("a", {
        href: "/basket", class: `button button-secondary${large ? " button-large" : ""}`,
        data: { link: "", test: "in-basket", productId: product.id },
      }, icon("check"), `In basket (${line.count})`));
    }
    if (product.stock <= 0) {
      return replace(slot, h("button", { type: "button", class: "button", disabled: true }, "Out of stock"));
    }
    const button = h("button", {
      type: "button", class: `button button-primary${large ? " button-large" : ""}`,
      data: { test: "add-to-basket", productId: product.id },
    }, "Add to basket");
    button.addEventListener("click", async () => {
      if (!session.isSignedIn()) return ctx.signInFirst("add");
      const done = await busy(button, "Adding…", () => basket.add(product.id, count()));
      if (done) toast(`Added “${product.title}” to your basket.`, "success");
      render();
    });
    replace(slot, button);
  };
  render();
  ctx.onLeave(basket.subscribe(render));
  return slot;
}

/** A product in the grid. */
function productCard(product, ctx) {
  return h(
    "article",
    { class: "card", data: { test: "product-card", productId: product.id } },
    h("a", { href: `/products/${product.id}`, class: "card-link", data: { link: "", test: "product-link" } },
      productVisual(product),
      h("h3", { class: "card-title", data: { test: "product-title" } }, product.title)),
    favoriteButton(product, ctx),
    h("p", { class: "card-meta" }, categoryName(product.category)),
    rating(product.rating),
    h("div", { class: "card-foot" }, price(product.price, "product-price"), basketButton(product, ctx)),
  );
}

// ---- the catalog

let categoriesCache = null;

function categories() {
  categoriesCache ??= session.read(Methods.listCategories, {})
    .then((answer) => answer.categories ?? [])
    .catch((error) => {
      categoriesCache = null;
      throw error;
    });
  return categoriesCache;
}

/** `/` with `?q=`, `?category=`, `?sort=`: the grid. */
export async function catalogPage(ctx) {
  const query = (ctx.query.get("q") ?? "").trim();
  const category = ctx.query.get("category") ?? "";
  const sort = SORTS.some(([value]) => value === ctx.query.get("sort")) ? ctx.query.get("sort") : "RELEVANCE";
  const request = { pageSize: PAGE_SIZE, sort };
  if (query) request.query = query;
  if (category) request.category = category;

  const [list, first] = await Promise.all([categories().catch(() => []), listPage(request)]);
  const heading = query ? `Results for “${query}”` : category ? categoryName(category) : "All products";
  ctx.setTitle(query ? `Search: ${query}` : category ? categoryName(category) : "");

  const link = (changes) => {
    const params = new URLSearchParams(ctx.query);
    for (const [key, value] of Object.entries(changes)) {
      if (value) params.set(key, value);
      else params.delete(key);
    }
    const text = params.toString();
    return text ? `/?${text}` : "/";
  };
  const sortSelect = h("select", { id: "sort", data: { test: "sort-select" }, value: sort },
    SORTS.map(([value, label]) => h("option", { value }, value === "RELEVANCE" && query ? "Best match" : label)));
  sortSelect.addEventListener("change", () => ctx.navigate(link({ sort: sortSelect.value === "RELEVANCE" ? "" : sortSelect.value }), { replace: true }));

  const nav = h("nav", { class: "categories", "aria-label": "Categories" },
    h("a", { href: link({ category: "" }), class: `chip${category ? "" : " is-active"}`, data: { link: "", test: "category", category: "" } }, "All"),
    list.map((item) => h("a", {
      href: link({ category: item.name }),
      class: `chip${item.name === category ? " is-active" : ""}`,
      "aria-current": item.name === category ? "page" : null,
      data: { link: "", test: "category", category: item.name },
    }, categoryName(item.name), h("span", { class: "chip-count" }, String(item.productCount)))));

  const grid = h("div", { class: "grid", data: { test: "product-grid" } });
  const more = h("div", { class: "more" });
  const count = h("p", { class: "result-count", data: { test: "result-count" } });
  const show = (page) => {
    grid.append(...page.products.map((product) => productCard(product, ctx)));
    count.textContent = page.totalSize === 1 ? "1 product" : `${page.totalSize} products`;
    more.replaceChildren();
    if (page.nextPageToken) {
      const button = h("button", { type: "button", class: "button button-secondary", data: { test: "load-more" } }, "Show more");
      button.addEventListener("click", () =>
        busy(button, "Loading…", async () => show(await listPage({ ...request, pageToken: page.nextPageToken }))));
      more.append(button);
    }
  };
  show(first);

  // The service's spelling correction of a search that found nothing, as a link that runs it.
  const empty = first.products.length === 0
    ? emptyState(query ? `Nothing matches “${query}”` : "No products here yet",
        first.suggestion ? "Did you mean:" : query ? "Check the spelling, or try a shorter search." : "Have a look at the other categories.",
        first.suggestion
          ? h("a", { href: link({ q: first.suggestion }), class: "button", data: { link: "", test: "search-suggestion" } }, first.suggestion)
          : h("a", { href: "/", class: "button button-secondary", data: { link: "" } }, "See all products"))
    : null;

  return h("div", { class: "catalog" },
    nav,
    h("div", { class: "catalog-head" },
      h("div", {}, pageTitle(heading, { data: { test: "catalog-title" } }), count),
      h("div", { class: "sort" }, h("label", { for: "sort" }, "Sort by"), sortSelect)),
    empty ?? [grid, more]);
}

async function listPage(request) {
  const answer = await session.read(Methods.listProducts, request);
  return {
    products: answer.products ?? [], nextPageToken: answer.nextPageToken ?? "", totalSize: answer.totalSize ?? 0,
    suggestion: answer.suggestion ?? "",
  };
}

// ---- one product

/** `/products/:id`: GetProductPage, with the shopper's favorite and basket line when signed in. */
export async function productPage(ctx) {
  const productId = Number(ctx.params.id);
  if (!Number.isInteger(productId) || productId <= 0) return ctx.notFound();
  let page;
  try {
    page = await session.call(Methods.getProductPage, { productId }, { optional: true });
  } catch (error) {
    if (error.reason === "PRODUCT_NOT_FOUND" || error.code === "not_found") return ctx.notFound("This product is no longer available.");
    throw error;
  }
  const product = page.product;
  if (page.isFavorite) favoriteIds.add(product.id);
  ctx.setTitle(product.title);

  const maxCount = Math.max(1, Math.min(10, product.stock));
  const quantity = h("select", { id: "quantity", data: { test: "quantity" } },
    Array.from({ length: maxCount }, (_, index) => h("option", { value: String(index + 1) }, String(index + 1))));
  const buy = basketButton(product, ctx, { count: () => Number(quantity.value), large: true });
  const quantityField = h("div", { class: "quantity" }, h("label", { for: "quantity" }, "Quantity"), quantity);
  const syncQuantity = () => { quantityField.hidden = Boolean(basket.lineFor(product.id)) || product.stock <= 0; };
  syncQuantity();
  ctx.onLeave(basket.subscribe(syncQuantity));

  return h("article", { class: "product", data: { test: "product-page", productId: product.id } },
    h("nav", { class: "breadcrumbs", "aria-label": "Breadcrumb" },
      h("a", { href: "/", data: { link: "" } }, "All products"), " / ",
      h("a", { href: `/?category=${encodeURIComponent(product.category)}`, data: { link: "" } }, categoryName(product.category))),
    h("div", { class: "product-layout" },
      productVisual(product, { large: true }),
      h("div", { class: "product-info" },
        pageTitle(product.title, { data: { test: "product-title" } }),
        rating(product.rating),
        h("p", { class: "product-price" }, price(product.price, "product-price")),
        stockNote(product.stock),
        h("p", { class: "description" }, product.description),
        h("div", { class: "buy" }, quantityField, buy, favoriteButton(product, ctx, { withLabel: true })),
        h("p", { class: "assurance" }, icon("lock"), "Secure checkout · Free shipping · 30-day returns"))));
}

// ---- favorites

/** `/favorites`: the saved products. */
export async function favoritesPage(ctx) {
  ctx.setTitle("Favorites");
  const grid = h("div", { class: "grid", data: { test: "favorites-grid" } });
  const more = h("div", { class: "more" });
  const show = (answer) => {
    for (const product of answer.products ?? []) favoriteIds.add(product.id);
    grid.append(...(answer.products ?? []).map((product) => productCard(product, ctx)));
    more.replaceChildren();
    if (answer.nextPageToken) {
      const button = h("button", { type: "button", class: "button button-secondary" }, "Show more");
      button.addEventListener("click", () => busy(button, "Loading…", async () =>
        show(await session.call(Methods.listFavorites, { pageSize: PAGE_SIZE, pageToken: answer.nextPageToken }))));
      more.append(button);
    }
  };
  const first = await session.call(Methods.listFavorites, { pageSize: PAGE_SIZE });
  if (!(first.products ?? []).length) {
    return h("div", {}, pageTitle("Favorites"),
      emptyState("No favorites yet", "Tap the heart on any product to keep it here.",
        h("a", { href: "/", class: "button button-primary", data: { link: "" } }, "Browse products")));
  }
  show(first);
  return h("div", {}, pageTitle("Favorites"), grid, more);
}
