#!/usr/bin/env python3
"""A shopper's journey through the web storefront in headless Chromium (issue 26, point 7).

Run by Tests/EndToEndTests/BrowserJourneyTests.swift against a system `deploy/compose up`
started; by hand:

    /usr/bin/python3 Tests/Browser/storefront_journey.py --base-url http://127.0.0.1:8080 \
        --mail-dir .data/auth-svc/mail --shopctl .build/debug/shopctl --output /tmp/journey

Needs Debian's chromium, chromium-driver and python3-selenium. Each step prints `STEP <name>`;
a failure prints `FAILED <step>: <why>`, saves the screenshot, the page's HTML and the browser
console under --output (printed as `ARTIFACT <path>`), and exits 1.
"""

import argparse
import email
import email.policy
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

WAIT = 20  # seconds any one expectation may take


class JourneyFailure(Exception):
    """A step that did not go as a shopper would expect."""


class Journey:
    def __init__(self, args):
        self.args = args
        self.base = args.base_url.rstrip("/")
        self.output = pathlib.Path(args.output)
        self.output.mkdir(parents=True, exist_ok=True)
        self.console = []
        self.step = "start"
        suffix = uuid.uuid4().hex[:8]
        self.email = f"browser-{suffix}@example.com"
        self.password = f"amber-harbor-{suffix}-lantern"
        self.new_password = f"cobalt-meadow-{suffix}-violin"
        self.name = "Ada Browser"
        self.shopctl_home = pathlib.Path(tempfile.mkdtemp(prefix="journey-shopctl-"))
        self.driver = self.start_browser()

    # ---- the browser

    def start_browser(self):
        options = webdriver.ChromeOptions()
        options.binary_location = self.args.chromium
        for flag in [
            "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,900",
            "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--lang=en-US",
            f"--user-data-dir={self.output / 'chromium-profile'}",
        ]:
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        try:
            service = Service(executable_path=self.args.chromedriver, log_path=str(self.output / "chromedriver.log"))
        except TypeError:  # Selenium 4.11 and later name it log_output
            service = Service(executable_path=self.args.chromedriver, log_output=str(self.output / "chromedriver.log"))
        driver = webdriver.Chrome(service=service, options=options)
        driver.set_page_load_timeout(WAIT)
        return driver

    def collect_console(self):
        try:
            for entry in self.driver.get_log("browser"):
                self.console.append(entry)
        except WebDriverException:
            pass

    def open(self, path_or_url):
        self.collect_console()
        url = path_or_url if path_or_url.startswith("http") else self.base + path_or_url
        self.driver.get(url)

    def wait(self, condition, what, timeout=WAIT):
        try:
            # A page being redrawn detaches what an earlier look found: look again.
            return WebDriverWait(self.driver, timeout, poll_frequency=0.1,
                                 ignored_exceptions=[StaleElementReferenceException]).until(lambda driver: condition())
        except TimeoutException:
            raise JourneyFailure(f"waited {timeout}s for {what}") from None

    def find(self, test, within=None):
        return (within or self.driver).find_element(By.CSS_SELECTOR, f"[data-test='{test}']")

    def find_all(self, test, within=None):
        return (within or self.driver).find_elements(By.CSS_SELECTOR, f"[data-test='{test}']")

    def present(self, test):
        return self.find_all(test)[0] if self.find_all(test) else None

    def visible_text(self, test):
        element = self.present(test)
        return element.text if element is not None and element.is_displayed() else None

    def click(self, test, within=None):
        element = self.wait(lambda: self.clickable(test, within), f"[data-test={test}] to be clickable")
        element.click()

    def clickable(self, test, within=None):
        for element in self.find_all(test, within):
            if element.is_displayed() and element.is_enabled():
                return element
        return None

    def type(self, test, text):
        element = self.wait(lambda: self.clickable(test), f"the field [data-test={test}]")
        element.clear()
        element.send_keys(text)

    def app_ready(self):
        self.wait(lambda: self.driver.execute_script("return document.documentElement.dataset.ready === 'true'"),
                  "the storefront to start")

    def route(self):
        return self.driver.execute_script("return document.body.dataset.route")

    def basket_count(self):
        badge = self.present("basket-count")
        if badge is None or not badge.is_displayed():
            return 0
        return int(badge.text or "0")

    # ---- outside the browser: mail and shopctl

    def mailed_link(self, kind, after):
        """The link in the newest mail of `kind` to our address written after `after` (a set of names)."""
        directory = pathlib.Path(self.args.mail_dir)
        pattern = re.compile(r"https?://\S+/" + re.escape(kind) + r"\?token=[A-Za-z0-9_\-%.~]+")

        def find():
            if not directory.is_dir():
                return None
            for path in sorted(directory.glob("*.eml"), reverse=True):
                if path.name in after:
                    continue
                message = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
                if message.get("X-Storefront-Kind") != kind or self.email not in str(message.get("To", "")).lower():
                    continue
                part = message.get_body(preferencelist=("plain", "html"))
                match = pattern.search(part.get_content() if part else "")
                if match:
                    return match.group(0)
            return None

        return self.wait(find, f"a {kind} mail to {self.email} in {directory}", timeout=30)

    def mails_now(self):
        directory = pathlib.Path(self.args.mail_dir)
        return {path.name for path in directory.glob("*.eml")} if directory.is_dir() else set()

    def shopctl(self, *arguments, stdin=None):
        environment = {key: value for key, value in os.environ.items() if not key.startswith("SHOP_")}
        environment["XDG_CONFIG_HOME"] = str(self.shopctl_home)
        command = [self.args.shopctl, "--gateway", self.args.gateway, *arguments]
        result = subprocess.run(command, input=stdin, capture_output=True, text=True, env=environment, timeout=60)
        if result.returncode != 0:
            raise JourneyFailure(f"shopctl {' '.join(arguments)} exited {result.returncode}: {result.stderr.strip()}")
        return result.stdout

    # ---- the steps

    def run(self):
        for step in [
            self.browse, self.sign_up, self.verify_by_mailed_link, self.sign_in, self.search_and_add_two,
            self.basket_changes_live, self.declined_then_paid, self.order_history_and_cancel, self.refreshes_the_session,
            self.fits_a_phone,
            self.reset_password_by_mailed_link, self.no_script_errors,
        ]:
            self.step = step.__name__
            print(f"STEP {self.step}", flush=True)
            step()

    def browse(self):
        self.open("/")
        self.app_ready()
        self.wait(lambda: len(self.find_all("product-card")) >= 4, "the product grid")
        title = self.driver.title
        if "Storefront" not in title:
            raise JourneyFailure(f"the page title is {title!r}")
        # Categories narrow the grid; the chosen one is the page's heading.
        chips = [chip for chip in self.find_all("category") if chip.get_attribute("data-category")]
        if len(chips) < 2:
            raise JourneyFailure(f"{len(chips)} categories shown")
        category = chips[1].get_attribute("data-category")
        chips[1].click()
        self.wait(lambda: (self.visible_text("catalog-title") or "").lower() == category.lower(), f"the {category} heading")
        cards = self.find_all("product-card")
        # Sorting by price puts the cheapest first.
        Select(self.find("sort-select")).select_by_value("PRICE_ASC")
        self.wait(lambda: "sort=PRICE_ASC" in self.driver.current_url, "the sort in the address")

        def prices():
            values = []
            for element in self.find_all("product-price"):
                digits = re.sub(r"[^0-9]", "", element.text)
                values.append(int(digits) if digits else 0)
            return values
        self.wait(lambda: len(prices()) == len(cards) and prices() == sorted(prices()), "prices in ascending order")

    def sign_up(self):
        self.open("/")
        self.app_ready()
        self.click("nav-signin")
        self.click("signup-link")
        self.type("signup-name", self.name)
        self.type("signup-email", self.email)
        self.type("signup-password", self.password)
        self.mails_before_signup = self.mails_now()
        self.click("signup-submit")
        notice = self.wait(lambda: self.visible_text("signup-notice"), "the check-your-mail notice")
        if self.email not in notice:
            raise JourneyFailure(f"the notice does not name {self.email}: {notice!r}")

    def verify_by_mailed_link(self):
        link = self.mailed_link("verify-email", self.mails_before_signup)
        self.open(link)
        self.wait(lambda: re.search(r"verified", self.driver.find_element(By.TAG_NAME, "body").text, re.I),
                  "the page to say the address is verified")
        body = self.driver.find_element(By.TAG_NAME, "body").text
        if re.search(r"expired|invalid|not valid|already used", body, re.I):
            raise JourneyFailure(f"the verification page says: {body!r}")

    def sign_in(self, password=None):
        self.open("/signin")
        self.app_ready()
        self.type("signin-email", self.email)
        self.type("signin-password", password or self.password)
        self.click("signin-submit")
        self.wait(lambda: self.present("nav-signout") is not None, "the signed-in header")
        greeting = self.find("user-name").get_attribute("textContent")
        if self.name.split()[0] not in greeting:
            raise JourneyFailure(f"the header greets {greeting!r}")

    def search_and_add_two(self):
        search = self.wait(lambda: self.clickable("search-input"), "the search box")
        search.clear()
        search.send_keys("headphones\n")
        self.wait(lambda: "headphones" in (self.visible_text("catalog-title") or "") and self.find_all("product-card"),
                  "search results")
        self.wait(lambda: all("headphones" in (card.text or "").lower() for card in self.find_all("product-card")),
                  "only headphones in the results")
        first = self.find_all("product-card")[0]
        self.first_product = int(first.get_attribute("data-product-id"))
        self.click("add-to-basket", within=first)
        self.wait(lambda: self.basket_count() == 1, "the basket count to become 1")
        self.wait(lambda: self.find_all("in-basket"), "the card to say it is in the basket")

        # The second from its product page, two of it.
        search = self.find("search-input")
        search.clear()
        search.send_keys("ring\n")
        self.wait(lambda: "ring" in (self.visible_text("catalog-title") or "") and self.find_all("product-card"),
                  "results for ring")
        card = self.wait(lambda: next((card for card in self.find_all("product-card")
                                       if int(card.get_attribute("data-product-id")) != self.first_product), None),
                         "a ring that is not the headphones")
        self.second_product = int(card.get_attribute("data-product-id"))
        self.click("product-link", within=card)
        self.wait(lambda: self.route() == "product" and self.visible_text("product-title"), "the product page")
        Select(self.find("quantity")).select_by_value("2")
        self.click("add-to-basket")
        self.wait(lambda: self.basket_count() == 3, "the basket count to become 3")
        # Saved to favorites from the product page.
        self.click("favorite-toggle")
        self.wait(lambda: self.find("favorite-toggle").get_attribute("aria-pressed") == "true", "the heart to fill")

    def basket_changes_live(self):
        self.click("nav-basket")
        self.wait(lambda: self.route() == "basket" and len(self.find_all("basket-line")) == 2, "two basket lines")
        self.wait(lambda: self.present("basket-live") is not None
                  and self.find("basket-live").get_attribute("data-status") == "live", "the live basket")
        # The same shopper, from the command line: another device.
        self.shopctl("auth", "login", "--email", self.email, "--password-stdin", stdin=self.password + "\n")
        basket = json.loads(self.shopctl("--json", "basket", "show").splitlines()[0])
        line = next(item for item in basket["items"] if item["productId"] == self.first_product)
        self.shopctl("basket", "set", line["id"], "4")
        self.wait(lambda: self.line_count(self.first_product) == 4, "the browser to show the count shopctl set")
        self.wait(lambda: self.basket_count() == 6, "the header count to follow")
        listed = json.loads(self.shopctl("--json", "products", "list", "--page-size", "10").splitlines()[0])
        third = next(p["id"] for p in listed["products"] if p["id"] not in (self.first_product, self.second_product) and p["stock"] > 0)
        self.shopctl("basket", "add", str(third))
        self.wait(lambda: len(self.find_all("basket-line")) == 3, "the line shopctl added to appear")
        self.wait(lambda: self.basket_count() == 7, "the header count to follow")
        self.wait(lambda: any("another device" in toast.text for toast in self.find_all("toast")),
                  "the notice that the basket changed elsewhere")
        self.items_before_order = self.basket_count()

    def line_count(self, product_id):
        for line in self.find_all("basket-line"):
            if int(line.get_attribute("data-product-id")) == product_id:
                return int(self.find("line-count", within=line).text)
        return None

    def fill_checkout(self, card):
        self.type("ship-name", "Ada Browser")
        self.type("ship-line1", "12 Analytical Row")
        self.type("ship-city", "London")
        self.type("ship-postal-code", "N1 9GU")
        Select(self.find("ship-country")).select_by_value("GB")
        self.type("card-number", card)
        self.type("card-expiry", "12/30")
        self.type("card-cvc", "123")

    def declined_then_paid(self):
        self.click("checkout-button")
        self.wait(lambda: self.route() == "checkout", "the checkout page")
        self.fill_checkout("4000 0000 0000 0002")
        self.click("place-order")
        declined = self.wait(lambda: self.visible_text("checkout-error"), "the decline message")
        if "declined" not in declined.lower() or re.search(r"[A-Z]{3,}_[A-Z]+|failed_precondition", declined):
            raise JourneyFailure(f"the decline reads {declined!r}")
        if self.basket_count() != self.items_before_order:
            raise JourneyFailure("the declined order changed the basket")
        self.type("card-number", "4242424242424242")
        self.click("place-order")
        self.wait(lambda: self.route() == "order" and self.visible_text("order-confirmation"), "the order confirmation")
        status = self.find("order-status").get_attribute("data-status")
        if status != "PAID":
            raise JourneyFailure(f"the new order is {status}")
        self.paid_order = self.find("order-page").get_attribute("data-order-id")
        self.wait(lambda: self.basket_count() == 0, "the basket to empty after the order")

    def order_history_and_cancel(self):
        self.click("nav-orders")
        self.wait(lambda: self.route() == "orders" and len(self.find_all("order-row")) >= 2, "two orders in the history")
        statuses = [row.get_attribute("data-status") for row in self.find_all("order-row")]
        if statuses[:2] != ["PAID", "PAYMENT_FAILED"]:
            raise JourneyFailure(f"the history shows {statuses}")
        self.find_all("order-row")[0].click()
        self.wait(lambda: self.route() == "order", "the order page")
        self.click("cancel-order")
        self.click("confirm-cancel")
        self.wait(lambda: self.find("order-status").get_attribute("data-status") == "CANCELLED", "the order to be cancelled")

    def reset_password_by_mailed_link(self):
        self.click("account-menu")
        self.click("nav-signout")
        self.wait(lambda: self.present("nav-signin") is not None, "the signed-out header")
        self.click("nav-signin")
        self.click("forgot-password-link")
        before = self.mails_now()
        self.type("forgot-email", self.email)
        self.click("forgot-submit")
        self.wait(lambda: self.visible_text("forgot-notice"), "the reset notice")
        link = self.mailed_link("reset-password", before)
        self.open(link)
        fields = self.wait(lambda: [f for f in self.driver.find_elements(By.CSS_SELECTOR, "input[type=password]") if f.is_displayed()],
                           "the new-password form")
        for field in fields:
            field.clear()
            field.send_keys(self.new_password)
        submit = self.driver.find_element(By.CSS_SELECTOR, "form button[type=submit], form input[type=submit], form button:not([type])")
        submit.click()
        self.wait(lambda: re.search(r"password", self.body_text(), re.I)
                  and re.search(r"changed|updated|has been reset|was reset|is set|saved", self.body_text(), re.I)
                  and not self.driver.find_elements(By.CSS_SELECTOR, "input[type=password]"),
                  "the page to say the password changed")
        # The old password no longer works; the new one does.
        self.open("/signin")
        self.app_ready()
        self.type("signin-email", self.email)
        self.type("signin-password", self.password)
        self.click("signin-submit")
        refused = self.wait(lambda: self.visible_text("signin-error"), "the old password to be refused")
        if "not right" not in refused:
            raise JourneyFailure(f"the refusal reads {refused!r}")
        self.sign_in(self.new_password)

    def body_text(self):
        try:
            return self.driver.find_element(By.TAG_NAME, "body").text
        except WebDriverException:
            return ""

    def refreshes_the_session(self):
        """Fifteen minutes on, the access token is renewed (RefreshSession) before a call needs it."""
        count = ("return performance.getEntriesByType('resource')"
                 ".filter(entry => entry.name.endsWith('.AuthService/RefreshSession')).length")
        self.driver.execute_script("performance.clearResourceTimings(); performance.setResourceTimingBufferSize(1000)")
        # The page's clock jumps 14.5 minutes ahead: its token now expires within the minute.
        self.driver.execute_script(
            "const real = Date.now.bind(Date); window.journeyRealNow = real; Date.now = () => real() + 870000")
        try:
            self.go("/favorites")
            self.wait(lambda: self.route() == "favorites" and self.find_all("product-card"), "the favorites page")
            ids = [int(card.get_attribute("data-product-id")) for card in self.find_all("product-card")]
            if ids != [self.second_product]:
                raise JourneyFailure(f"favorites shows {ids}, not {self.second_product}")
            self.wait(lambda: self.driver.execute_script(count) == 1, "one RefreshSession call")
        finally:
            self.driver.execute_script("if (window.journeyRealNow) Date.now = window.journeyRealNow")
        self.go("/orders")
        self.wait(lambda: self.route() == "orders" and self.find_all("order-row") and self.present("nav-signout"),
                  "the orders, still signed in with the renewed session")

    def go(self, path):
        """In-app navigation (no page load: the session lives in the page's memory)."""
        self.driver.execute_script(
            "history.pushState(null, '', arguments[0]); window.dispatchEvent(new PopStateEvent('popstate'))", path)

    def fits_a_phone(self):
        self.driver.set_window_size(390, 844)
        try:
            for path, ready in [("/", "product-card"), ("/basket", "basket-empty"), ("/orders", "order-row"),
                                ("/products/%d" % self.first_product, "product-title")]:
                self.go(path)
                self.wait(lambda: self.present(ready) is not None and self.present("nav-signout") is not None,
                          f"{path} on a phone, signed in")
                overflow = self.driver.execute_script(
                    "return document.documentElement.scrollWidth - document.documentElement.clientWidth")
                if overflow > 1:
                    raise JourneyFailure(f"{path} is {overflow}px wider than a phone's screen")
        finally:
            self.driver.set_window_size(1280, 900)

    def no_script_errors(self):
        self.collect_console()
        bad = [entry for entry in self.console
               if entry.get("level") == "SEVERE" and re.search(r"Uncaught|Content Security Policy|SyntaxError|TypeError|ReferenceError", entry.get("message", ""))]
        if bad:
            raise JourneyFailure("the console shows script errors: " + "; ".join(entry["message"] for entry in bad[:5]))

    # ---- failure and cleanup

    def save_artifacts(self):
        paths = []
        try:
            screenshot = self.output / "failure.png"
            self.driver.save_screenshot(str(screenshot))
            paths.append(screenshot)
            page = self.output / "page.html"
            page.write_text(f"<!-- {self.driver.current_url} -->\n" + self.driver.page_source)
            paths.append(page)
        except WebDriverException as error:
            print(f"could not save the screenshot: {error}", flush=True)
        self.collect_console()
        console = self.output / "console.log"
        lines = [f"{entry.get('timestamp')} {entry.get('level')} {entry.get('message')}\n" for entry in self.console]
        console.write_text("".join(lines) or "(the page logged nothing to its console)\n")
        paths.append(console)
        for path in paths:
            print(f"ARTIFACT {path}", flush=True)

    def close(self):
        try:
            self.driver.quit()
        except WebDriverException:
            pass
        shutil.rmtree(self.shopctl_home, ignore_errors=True)
        shutil.rmtree(self.output / "chromium-profile", ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True, help="the gateway, e.g. http://127.0.0.1:8080")
    parser.add_argument("--gateway", help="host:port for shopctl (default: from --base-url)")
    parser.add_argument("--mail-dir", required=True, help="auth-svc's mail directory (<data>/auth-svc/mail)")
    parser.add_argument("--shopctl", required=True, help="the shopctl executable")
    parser.add_argument("--output", required=True, help="where screenshots and logs go")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    parser.add_argument("--chromedriver", default=shutil.which("chromedriver") or "/usr/bin/chromedriver")
    args = parser.parse_args()
    if not args.gateway:
        args.gateway = re.sub(r"^https?://", "", args.base_url).rstrip("/")

    journey = Journey(args)
    started = time.monotonic()
    try:
        journey.run()
        print(f"PASSED in {time.monotonic() - started:.1f}s", flush=True)
        return 0
    except (JourneyFailure, WebDriverException, StopIteration, ValueError, KeyError) as error:
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        print(f"FAILED {journey.step}: {message}", flush=True)
        journey.save_artifacts()
        return 1
    finally:
        journey.close()


if __name__ == "__main__":
    sys.exit(main())
