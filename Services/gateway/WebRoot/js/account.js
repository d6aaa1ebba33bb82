// Accounts: sign in, create an account (then the notice to open the mailed link), forgotten
// password. Verification and the new password itself happen on the pages the mailed links
// open (/verify-email, /reset-password), which the gateway serves.

import { Methods, unary } from "./api.js";
import { h } from "./dom.js";
import * as session from "./session.js";
import { busy, errorSlot, field, notice, pageTitle } from "./ui.js";

/**
 * Why the shopper was sent to sign in (`?why=`): a key, never text from the address, so that
 * nobody can put their own words on our page with a crafted link.
 */
const SIGN_IN_REASONS = {
  add: "Sign in to add items to your basket.",
  favorite: "Sign in to save favorites.",
  favorites: "Sign in to see your favorites.",
  basket: "Sign in to see your basket.",
  checkout: "Sign in to check out.",
  orders: "Sign in to see your orders.",
};

/** Where to go after signing in: `?next=` when it is a path of this shop, else home. */
function nextPath(ctx) {
  const next = ctx.query.get("next") ?? "/";
  return next.startsWith("/") && !next.startsWith("//") && !next.includes("\\") ? next : "/";
}

/** `/signin`. */
export function signInPage(ctx) {
  ctx.setTitle("Sign in");
  const errors = errorSlot("signin-error");
  const email = h("input", { id: "signin-email", name: "email", type: "email", autocomplete: "username", required: true, data: { test: "signin-email" } });
  const password = h("input", { id: "signin-password", name: "password", type: "password", autocomplete: "current-password", required: true, data: { test: "signin-password" } });
  const submit = h("button", { type: "submit", class: "button button-primary button-block", data: { test: "signin-submit" } }, "Sign in");
  const form = h("form", { class: "form", novalidate: false },
    errors,
    h("div", { class: "field" }, h("label", { for: "signin-email" }, "Email"), email),
    h("div", { class: "field" },
      h("div", { class: "label-row" },
        h("label", { for: "signin-password" }, "Password"),
        h("a", { href: "/forgot-password", data: { link: "", test: "forgot-password-link" } }, "Forgot your password?")),
      password),
    submit);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const ok = await busy(submit, "Signing in…", () => session.signIn(email.value.trim(), password.value), errors);
    if (ok) ctx.navigate(nextPath(ctx), { replace: true });
  });
  const why = ctx.query.get("why") ?? "";
  const reason = Object.hasOwn(SIGN_IN_REASONS, why) ? SIGN_IN_REASONS[why] : null;
  return h("section", { class: "auth-card" },
    pageTitle("Sign in"),
    reason ? notice("info", reason, { test: "signin-notice" }) : null,
    form,
    h("p", { class: "auth-switch" }, "New here? ", h("a", { href: "/signup", data: { link: "", test: "signup-link" } }, "Create an account")));
}

/** `/signup`: SignUp, then the notice to open the mailed link. */
export function signUpPage(ctx) {
  ctx.setTitle("Create an account");
  const errors = errorSlot("signup-error");
  const name = field("Your name", { name: "displayName", type: "text", autocomplete: "name", maxlength: "100", data: { test: "signup-name" } });
  const email = field("Email", { name: "email", type: "email", autocomplete: "email", required: true, data: { test: "signup-email" } });
  const password = field(
    "Password",
    { name: "password", type: "password", autocomplete: "new-password", required: true, minlength: "8", maxlength: "256", data: { test: "signup-password" } },
    { hint: "At least 8 characters. Avoid common passwords and your email address." });
  const submit = h("button", { type: "submit", class: "button button-primary button-block", data: { test: "signup-submit" } }, "Create account");
  const form = h("form", { class: "form" }, errors, name, email, password, submit);
  const card = h("section", { class: "auth-card" },
    pageTitle("Create an account"),
    form,
    h("p", { class: "auth-switch" }, "Already have an account? ", h("a", { href: "/signin", data: { link: "" } }, "Sign in")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const value = (container) => container.querySelector("input").value;
    const address = value(email).trim();
    const request = { email: address, password: value(password) };
    if (value(name).trim()) request.displayName = value(name).trim();
    const ok = await busy(submit, "Creating your account…", () => unary(Methods.signUp, request), errors);
    if (ok) card.replaceChildren(...checkYourMail(address));
  });
  return card;
}

/** The notice after signing up: open the link we mailed; send it again if it did not come. */
function checkYourMail(address) {
  const status = h("div", { "aria-live": "polite" });
  const resend = h("button", { type: "button", class: "button button-secondary", data: { test: "resend-verification" } }, "Send the link again");
  resend.addEventListener("click", async () => {
    const ok = await busy(resend, "Sending…", () => unary(Methods.resendVerification, { email: address }), status);
    if (ok) status.replaceChildren(notice("success", "We've sent a new link. It may take a minute to arrive."));
  });
  return [
    pageTitle("Check your email"),
    notice("success", [
      h("p", {}, "We've sent a verification link to ", h("strong", {}, address), "."),
      h("p", {}, "Open it to activate your account, then come back and sign in. The link is valid for 24 hours."),
    ], { test: "signup-notice" }),
    status,
    h("div", { class: "actions" }, h("a", { href: "/signin", class: "button button-primary", data: { link: "", test: "go-signin" } }, "Go to sign in"), resend),
  ];
}

/** `/forgot-password`: RequestPasswordReset. */
export function forgotPasswordPage(ctx) {
  ctx.setTitle("Reset your password");
  const errors = errorSlot("forgot-error");
  const email = field("Email", { name: "email", type: "email", autocomplete: "email", required: true, data: { test: "forgot-email" } });
  const submit = h("button", { type: "submit", class: "button button-primary button-block", data: { test: "forgot-submit" } }, "Send reset link");
  const form = h("form", { class: "form" }, errors, email, submit);
  const card = h("section", { class: "auth-card" },
    pageTitle("Reset your password"),
    h("p", { class: "lead" }, "Enter the email address of your account and we'll send you a link to choose a new password."),
    form,
    h("p", { class: "auth-switch" }, h("a", { href: "/signin", data: { link: "" } }, "Back to sign in")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const address = email.querySelector("input").value.trim();
    const ok = await busy(submit, "Sending…", () => unary(Methods.requestPasswordReset, { email: address }), errors);
    if (ok) {
      card.replaceChildren(
        pageTitle("Check your email"),
        notice("success", [
          h("p", {}, "If there is an account for ", h("strong", {}, address), ", we've sent it a link to reset the password."),
          h("p", {}, "The link is valid for one hour. Resetting signs you out on every device."),
        ], { test: "forgot-notice" }),
        h("div", { class: "actions" }, h("a", { href: "/signin", class: "button button-secondary", data: { link: "" } }, "Back to sign in")));
    }
  });
  return card;
}
