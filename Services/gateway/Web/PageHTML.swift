import Foundation
import RPC

/// A piece of HTML markup. Built from a string literal, whose interpolations escape every
/// `String` (`&`, `<`, `>`, `"`, `'`) and insert only other `HTML` as it is — so a value from
/// a request or a service cannot reach a page unescaped unless someone writes `HTML(unescaped:)`.
struct HTML: Sendable, ExpressibleByStringInterpolation {
    /// The markup.
    private(set) var markup: String

    /// Markup taken as it is: only for text that is markup by construction.
    init(unescaped markup: String) { self.markup = markup }

    init(stringLiteral markup: String) { self.markup = markup }

    init(stringInterpolation: StringInterpolation) { markup = stringInterpolation.markup }

    /// Builds markup: literal parts as they are, `String`s escaped, `HTML` inserted.
    struct StringInterpolation: StringInterpolationProtocol {
        var markup = ""

        init(literalCapacity: Int, interpolationCount: Int) { markup.reserveCapacity(literalCapacity + 16 * interpolationCount) }

        mutating func appendLiteral(_ literal: String) { markup += literal }

        /// Text, escaped for an element's content or a quoted attribute value.
        mutating func appendInterpolation(_ text: String) { markup += HTML.escape(text) }

        /// Markup, as it is.
        mutating func appendInterpolation(_ html: HTML) { markup += html.markup }

        /// Markup when there is some, nothing for nil.
        mutating func appendInterpolation(_ html: HTML?) { markup += html?.markup ?? "" }
    }

    /// `text` with the five characters that can end text or a quoted attribute replaced by
    /// character references, so it reads as text wherever it is put.
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }
}

/// One page of ``AccountPages``: its HTTP status, its title (also its heading) and what
/// follows the heading.
struct AccountPage: Sendable {
    var status: Int
    var title: String
    var content: HTML
}

/// The frame, headers and stylesheet every account page shares.
enum PageHTML {
    /// Where the pages' stylesheet is served: the strict policy below loads styles from the
    /// gateway's own origin only, never inline.
    static let stylesheetPath = "/account/pages.css"

    /// The policy of every page: nothing may load or run but the stylesheet (no script at all),
    /// forms post only to the gateway, no other site may frame the page, and a `<base>` cannot
    /// redirect its relative links.
    static let contentSecurityPolicy =
        "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    /// The headers of every page. `no-store`: a page may carry a token (the reset form's hidden
    /// field) and none is worth keeping. `no-referrer`: the page's own address holds the token,
    /// and the stylesheet request or a followed link would otherwise send it along.
    static let headers: WebHeaders = [
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
        "content-security-policy": contentSecurityPolicy,
        "x-frame-options": "DENY",
        "referrer-policy": "no-referrer",
        "x-content-type-options": "nosniff",
    ]

    /// The complete document of `page`.
    static func document(_ page: AccountPage) -> Data {
        let html: HTML = """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="robots" content="noindex">
            <title>\(page.title) · Storefront</title>
            <link rel="stylesheet" href="\(stylesheetPath)">
            </head>
            <body>
            <main>
            <p class="brand"><a href="/">Storefront</a></p>
            <h1>\(page.title)</h1>
            \(page.content)
            </main>
            </body>
            </html>

            """
        return Data(html.markup.utf8)
    }

    /// A paragraph of `text`.
    static func paragraph(_ text: String) -> HTML { "<p>\(text)</p>" }

    /// A problem to fix before sending a form again, announced to screen readers.
    static func notice(_ text: String) -> HTML { "<p class=\"notice\" role=\"alert\">\(text)</p>" }

    /// A link styled as the page's main action.
    static func button(_ label: String, to target: String) -> HTML {
        "<p><a class=\"button\" href=\"\(target)\">\(label)</a></p>"
    }

    /// A form asking for an email address, posted to `action`; `email` fills the field in.
    static func emailForm(action: String, email: String, submit: String) -> HTML {
        """
        <form method="post" action="\(action)">
        <label for="email">Email address</label>
        <input id="email" name="email" type="email" autocomplete="email" required value="\(email)">
        <button type="submit">\(submit)</button>
        </form>
        """
    }

    /// The stylesheet: a centred card, readable on a phone, light or dark as the system is.
    static let stylesheet = Data(
        """
        :root {
          color-scheme: light dark;
          --background: #f4f4f2; --card: #ffffff; --text: #1d1d1b; --muted: #55554f;
          --accent: #0f6b5f; --accent-text: #ffffff; --border: #d8d8d2;
          --notice-background: #fdf0ef; --notice: #a32016;
        }
        @media (prefers-color-scheme: dark) {
          :root {
            --background: #191917; --card: #262623; --text: #f2f2ee; --muted: #b3b3aa;
            --accent: #46c6b2; --accent-text: #0b2a25; --border: #44443f;
            --notice-background: #3d1411; --notice: #f6b2aa;
          }
        }
        * { box-sizing: border-box; }
        body {
          margin: 0; min-height: 100vh; display: flex; align-items: center; justify-content: center;
          padding: 1.5rem; background: var(--background); color: var(--text);
          font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", sans-serif;
        }
        main {
          width: 100%; max-width: 28rem; padding: 2rem; background: var(--card);
          border: 1px solid var(--border); border-radius: 14px; box-shadow: 0 2px 10px rgb(0 0 0 / 0.06);
        }
        .brand { margin: 0 0 1.5rem; font-weight: 700; letter-spacing: 0.02em; }
        .brand a { color: var(--accent); text-decoration: none; }
        h1 { margin: 0 0 0.75rem; font-size: 1.45rem; line-height: 1.25; }
        p, ul { margin: 0 0 1rem; color: var(--muted); }
        ul { padding-left: 1.25rem; }
        strong { color: var(--text); overflow-wrap: anywhere; }
        .notice {
          padding: 0.75rem 1rem; border-radius: 8px; background: var(--notice-background); color: var(--notice);
        }
        form { display: grid; gap: 0.4rem; margin-top: 1.25rem; }
        label { margin-top: 0.5rem; font-weight: 600; font-size: 0.95rem; }
        input {
          width: 100%; padding: 0.65rem 0.75rem; font: inherit; color: inherit; background: transparent;
          border: 1px solid var(--border); border-radius: 8px;
        }
        input:focus, button:focus-visible, a:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
        button, .button {
          display: inline-block; margin-top: 0.75rem; padding: 0.7rem 1.1rem; font: inherit; font-weight: 600;
          color: var(--accent-text); background: var(--accent); border: 0; border-radius: 8px;
          text-align: center; text-decoration: none; cursor: pointer;
        }
        @media (max-width: 30rem) { body { padding: 0.75rem; } main { padding: 1.5rem 1.25rem; } }

        """.utf8)
}
