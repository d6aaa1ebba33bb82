// Building DOM nodes without HTML strings: every text goes in as a text node, so nothing a
// product, an order or an error message holds can become markup (and the CSP forbids inline
// script and style anyway).

/**
 * h("a", {href: "/", class: "brand", data: {test: "brand"}, on: {click}}, "Storefront", child…)
 * Attributes: `class`, `data` (dataset), `on` (event listeners), booleans (true sets an empty
 * attribute, false/null/undefined leave it out), anything else as a string attribute.
 * Children: nodes, strings, numbers, arrays of them; null/false/undefined are skipped.
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  let initialValue;
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "data") {
      for (const [key, item] of Object.entries(value)) {
        if (item !== null && item !== undefined) element.dataset[key] = String(item);
      }
    } else if (name === "on") {
      for (const [event, listener] of Object.entries(value)) element.addEventListener(event, listener);
    } else if (name === "value" && "value" in element) {
      initialValue = value; // after the children: a <select> needs its options first
    } else {
      element.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(element, children);
  if (initialValue !== undefined) element.value = initialValue;
  return element;
}

/** Appends `children` (nodes, strings, nested arrays; null/false skipped) to `parent`. */
export function append(parent, children) {
  for (const child of [children].flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

/** Replaces everything in `parent` with `children`. */
export function replace(parent, ...children) {
  parent.replaceChildren();
  return append(parent, children);
}

/** An inline SVG icon from the sprite-free set below (stroke icons, 24×24). */
export function icon(name, label) {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("class", `icon icon-${name}`);
  if (label) {
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", label);
  } else {
    svg.setAttribute("aria-hidden", "true");
  }
  for (const d of ICONS[name] ?? []) {
    const path = document.createElementNS("http://www.w3.org/2000/svg", "path");
    path.setAttribute("d", d);
    svg.append(path);
  }
  return svg;
}

const ICONS = {
  bag: ["M6 7h12l-1 13H7L6 7z", "M9 7a3 3 0 0 1 6 0"],
  heart: ["M12 20s-7-4.4-7-10a4 4 0 0 1 7-2.6A4 4 0 0 1 19 10c0 5.6-7 10-7 10z"],
  user: ["M12 12a4 4 0 1 0 0-8 4 4 0 0 0 0 8z", "M4 21a8 8 0 0 1 16 0"],
  box: ["M3 7l9-4 9 4-9 4-9-4z", "M3 7v10l9 4 9-4V7", "M12 11v10"],
  search: ["M11 18a7 7 0 1 0 0-14 7 7 0 0 0 0 14z", "M20 20l-4-4"],
  star: ["M12 3l2.7 5.6 6.1.9-4.4 4.3 1 6.1L12 17l-5.4 2.9 1-6.1L3.2 9.5l6.1-.9L12 3z"],
  trash: ["M4 7h16", "M9 7V4h6v3", "M6 7l1 13h10l1-13"],
  check: ["M5 12l5 5 9-10"],
  alert: ["M12 3l10 18H2L12 3z", "M12 10v5", "M12 18v.01"],
  info: ["M12 21a9 9 0 1 0 0-18 9 9 0 0 0 0 18z", "M12 11v5", "M12 8v.01"],
  lock: ["M6 11h12v10H6z", "M8 11V8a4 4 0 0 1 8 0v3"],
  back: ["M15 5l-7 7 7 7"],
};
