import Contracts
import Foundation
@testable import gateway
import Logging
import RPC
import RPCHTTP2
import ServiceTestSupport
import Synchronization
import Testing

/// The pages a mailed link opens (``AccountPages``), served in process: fake auth handlers on
/// a router, the answer captured.
@Suite("Account pages")
struct AccountPagesTests {
    static let token = "tok_Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZg"

    // MARK: Verify

    @Test("a verification link verifies through the router as the client, and says so with a link to the shop")
    func verifies() async throws {
        let fixture = PagesFixture { router, calls in
            router.unary(AuthContract.verifyEmail) { request, context in
                calls.record(request, context)
                return UserResponse(user: User(id: "u1", email: "ada<b>@example.com", emailVerified: true, providers: ["password"], createdAt: "2026-01-01T00:00:00Z"))
            }
        }
        let answer = await fixture.get("/verify-email", query: "token=\(Self.token)", peer: "10.1.2.3:5555")
        #expect(answer.status == 200)
        #expect(answer.text.contains("Your email address is verified"))
        #expect(answer.text.contains("<a class=\"button\" href=\"/\">Go to the shop</a>"))
        #expect(answer.text.contains("ada&lt;b&gt;@example.com"), "the address, escaped")
        let call = try #require(fixture.calls.only)
        #expect((call.request as? VerifyEmailRequest)?.token == Self.token)
        #expect(call.peer == "10.1.2.3:5555")
        #expect(call.metadata.count == 0, "nothing of the browser's travels as metadata")
        #expect(answer.notedPath == "/verify-email")
        #expect(answer.notedStatus == nil)
        #expect(answer.notedRequestID?.description == call.requestID)
    }

    @Test("each request gets a request id of its own")
    func freshRequestIDs() async throws {
        let fixture = PagesFixture.answering(AuthContract.verifyEmail) { _ in Self.user }
        let first = await fixture.get("/verify-email", query: "token=a")
        let second = await fixture.get("/verify-email", query: "token=b")
        #expect(first.notedRequestID != nil && first.notedRequestID != second.notedRequestID)
    }

    @Test(
        "a link auth-svc refuses says why in words, with the form for a new link",
        arguments: [
            (AuthReason.tokenExpired.error("The link has expired; ask for a new one."), 410, "This link has expired"),
            (AuthReason.invalidToken.error("The link is not valid or was already used."), 400, "already used"),
        ])
    func refusedLink(error: RPCError, status: Int, words: String) async throws {
        let fixture = PagesFixture.answering(AuthContract.verifyEmail) { _ in throw error }
        let answer = await fixture.get("/verify-email", query: "token=\(Self.token)")
        #expect(answer.status == status)
        #expect(answer.text.contains(words))
        #expect(answer.text.contains("<form method=\"post\" action=\"/verify-email/resend\">"))
        #expect(answer.notedStatus?.reason == error.reason)
        if AuthReason.invalidToken.matches(error) {
            #expect(answer.text.contains("<a href=\"/\">go to the shop</a>"), "a link opened twice: verified already")
        }
    }

    @Test(
        "a link without a token is answered 400 in words, without a call",
        arguments: [nil, "", "token=", "token=%20%0A", "tokens=abc", "other=1"])
    func missingToken(query: String?) async throws {
        let fixture = PagesFixture.answering(AuthContract.verifyEmail) { _ in Self.user }
        let answer = await fixture.get("/verify-email", query: query)
        #expect(answer.status == 400)
        #expect(answer.text.contains("This link is incomplete"))
        #expect(answer.text.contains("action=\"/verify-email/resend\""))
        #expect(fixture.calls.all.isEmpty)
    }

    @Test("a token longer than auth-svc accepts is refused without a call and not copied into the page")
    func overlongToken() async throws {
        let fixture = PagesFixture.answering(AuthContract.verifyEmail) { _ in Self.user }
        let long = String(repeating: "x", count: 513)
        let answer = await fixture.get("/verify-email", query: "token=\(long)")
        #expect(answer.status == 400)
        #expect(!answer.text.contains(long))
        #expect(fixture.calls.all.isEmpty)
    }

    @Test(
        "trouble is told in words: rate limited 429, busy or away 503, anything else 500",
        arguments: [
            (RPCError(code: .resourceExhausted, reason: "RATE_LIMITED", message: "limit-x1"), 429, "Too many requests"),
            (RPCError(code: .resourceExhausted, reason: "OVERLOADED", message: "hashers-x2"), 503, "try again in a few minutes"),
            (RPCError(code: .unavailable, message: "auth-svc is unavailable"), 503, "try again in a few minutes"),
            (RPCError(code: .deadlineExceeded, message: "late-x3"), 503, "try again in a few minutes"),
            (RPCError(code: .internal, message: "Internal error."), 500, "Something went wrong"),
        ])
    func trouble(error: RPCError, status: Int, words: String) async throws {
        let fixture = PagesFixture.answering(AuthContract.verifyEmail) { _ in throw error }
        let answer = await fixture.get("/verify-email", query: "token=\(Self.token)")
        #expect(answer.status == status)
        #expect(answer.text.contains(words))
        #expect(!answer.text.contains(error.message), "the service's own message is not shown")
    }

    @Test("a failure is logged with its request id, and neither the token nor the password reaches any log line")
    func secretsNeverLogged() async throws {
        let password = "correct-horse-battery-9"
        let fixture = PagesFixture { router, _ in
            router.unary(AuthContract.verifyEmail) { request, context in
                context.logger.info("verifying")
                throw RPCError(code: .internal, message: "store failed for token \(request.token)")
            }
            router.unary(AuthContract.resetPassword) { request, _ in
                throw RPCError(code: .unavailable, message: "gone: \(request.token) \(request.newPassword)")
            }
        }
        let verify = await fixture.get("/verify-email", query: "token=\(Self.token)")
        let reset = await fixture.post("/reset-password", form: "token=\(Self.token)&password=\(password)&confirm=\(password)")
        #expect(verify.status == 500)
        #expect(reset.status == 503)
        let lines = fixture.logs.lines
        #expect(lines.contains { $0.contains("request-id=\(verify.notedRequestID?.description ?? "-")") && $0.contains("INTERNAL") })
        #expect(lines.contains { $0.contains("UNAVAILABLE") })
        for line in lines {
            #expect(!line.contains(Self.token), "\(line)")
            #expect(!line.contains(password), "\(line)")
        }
        #expect(verify.notedPath == "/verify-email")
        #expect(reset.notedPath == "/reset-password")
    }

    @Test("a client that goes away cancels the call behind the page")
    func cancellation() async throws {
        let cancelled = Mutex(false)
        let started = Mutex(false)
        let fixture = PagesFixture { router, _ in
            router.unary(AuthContract.verifyEmail) { _, _ in
                started.withLock { $0 = true }
                do {
                    try await Task.sleep(for: .seconds(30))
                } catch {
                    cancelled.withLock { $0 = true }
                    throw error
                }
                return Self.user
            }
        }
        let response = CapturedWebResponse()
        #expect(fixture.pages.serve(fixture.request("GET", "/verify-email", query: "token=abc"), response: response))
        #expect(await eventually { started.withLock { $0 } })
        response.cancel()
        #expect(await eventually { cancelled.withLock { $0 } })
    }

    // MARK: Resend

    @Test("the resend form asks ResendVerification and answers the same whether or not the address has an account")
    func resends() async throws {
        let fixture = PagesFixture.answering(AuthContract.resendVerification) { _ in Empty() }
        let form = await fixture.get("/verify-email/resend", query: nil)
        #expect(form.status == 200)
        #expect(form.text.contains("name=\"email\""))
        let answer = await fixture.post("/verify-email/resend", form: "email=ada%2Bshop%40example.com")
        #expect(answer.status == 200)
        #expect(answer.text.contains("If an account exists for <strong>ada+shop@example.com</strong>"))
        #expect((fixture.calls.only?.request as? ResendVerificationRequest)?.email == "ada+shop@example.com")
        #expect(answer.notedPath == "/verify-email/resend")
    }

    @Test(
        "a resend auth-svc refuses shows the form again with the address and the reason in words",
        arguments: [
            (AuthReason.invalidEmail.invalidField("email", "is not a valid email address"), 400, "Enter a valid email address"),
            (AuthReason.rateLimited.error("Too many requests."), 429, "Wait a few minutes"),
        ])
    func resendRefused(error: RPCError, status: Int, words: String) async throws {
        let fixture = PagesFixture.answering(AuthContract.resendVerification) { _ in throw error }
        let answer = await fixture.post("/verify-email/resend", form: "email=%22%3E%3Cb%3Eada")
        #expect(answer.status == status)
        #expect(answer.text.contains(words))
        #expect(answer.text.contains("value=\"&quot;&gt;&lt;b&gt;ada\""), "the address back in the field, escaped")
    }

    @Test("an empty address is asked for again without a call")
    func resendEmpty() async throws {
        let fixture = PagesFixture.answering(AuthContract.resendVerification) { _ in Empty() }
        let answer = await fixture.post("/verify-email/resend", form: "email=+")
        #expect(answer.status == 400)
        #expect(answer.text.contains("Enter the email address"))
        #expect(fixture.calls.all.isEmpty)
    }

    // MARK: Reset

    @Test("a reset link shows the form with the policy's rules and the token in a hidden field, without a call")
    func resetForm() async throws {
        let fixture = PagesFixture.answering(AuthContract.resetPassword) { _ in Empty() }
        let answer = await fixture.get("/reset-password", query: "token=\(Self.token)")
        #expect(answer.status == 200)
        #expect(answer.text.contains("<form method=\"post\" action=\"/reset-password\">"))
        #expect(answer.text.contains("<input type=\"hidden\" name=\"token\" value=\"\(Self.token)\">"))
        for rule in ["8 to 256 characters", "not your email address", "not a commonly used password"] {
            #expect(answer.text.contains(rule))
        }
        #expect(answer.text.contains("name=\"password\"") && answer.text.contains("name=\"confirm\""))
        #expect(answer.text.contains("autocomplete=\"new-password\""))
        #expect(fixture.calls.all.isEmpty)
    }

    @Test("a token is escaped wherever a page puts it")
    func tokenEscaped() async throws {
        let fixture = PagesFixture.answering(AuthContract.resetPassword) { _ in Empty() }
        let answer = await fixture.get("/reset-password", query: "token=%22%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E")
        #expect(answer.status == 200)
        #expect(!answer.text.contains("<script"))
        #expect(answer.text.contains("value=\"&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;\""))
    }

    @Test("the form sets the password through ResetPassword and says so with a link to sign in")
    func resets() async throws {
        let fixture = PagesFixture.answering(AuthContract.resetPassword) { _ in Empty() }
        let answer = await fixture.post(
            "/reset-password", form: "token=\(Self.token)&password=amber+orchard%26violin&confirm=amber+orchard%26violin",
            contentType: "Application/X-WWW-Form-Urlencoded; charset=UTF-8")
        #expect(answer.status == 200)
        #expect(answer.text.contains("Your password is changed"))
        #expect(answer.text.contains("href=\"/\">Sign in</a>"))
        let request = try #require(fixture.calls.only?.request as? ResetPasswordRequest)
        #expect(request.token == Self.token)
        #expect(request.newPassword == "amber orchard&violin")
        #expect(answer.notedPath == "/reset-password")
    }

    @Test("passwords that differ show the form again, token kept, without a call")
    func mismatch() async throws {
        let fixture = PagesFixture.answering(AuthContract.resetPassword) { _ in Empty() }
        let answer = await fixture.post("/reset-password", form: "token=\(Self.token)&password=amber-orchard&confirm=amber-orchid")
        #expect(answer.status == 400)
        #expect(answer.text.contains("The two passwords are not the same"))
        #expect(answer.text.contains("value=\"\(Self.token)\""))
        #expect(!answer.text.contains("amber-orch"), "a password is never put back into a page")
        #expect(fixture.calls.all.isEmpty)
    }

    @Test(
        "a weak password shows the form again with auth-svc's reason in words",
        arguments: [
            ("The password must not be your email address.", "The password must not be your email address."),
            ("must be at most 256 characters", "The password must be at most 256 characters."),
            ("<i>too common</i>", "&lt;i&gt;too common&lt;/i&gt;"),
        ])
    func weakPassword(description: String, shown: String) async throws {
        let fixture = PagesFixture.answering(AuthContract.resetPassword) { _ in
            throw AuthReason.weakPassword.invalidField("newPassword", description)
        }
        let answer = await fixture.post("/reset-password", form: "token=\(Self.token)&password=ada%40example.com&confirm=ada%40example.com")
        #expect(answer.status == 400)
        #expect(answer.text.contains("<p class=\"notice\" role=\"alert\">\(shown)</p>"))
        #expect(answer.text.contains("name=\"token\" value=\"\(Self.token)\""))
    }

    @Test("a password longer than auth-svc takes is refused here without a call")
    func overlongPassword() async throws {
        let fixture = PagesFixture.answering(AuthContract.resetPassword) { _ in Empty() }
        let long = String(repeating: "p", count: 4097)
        let answer = await fixture.post("/reset-password", form: "token=t&password=\(long)&confirm=\(long)")
        #expect(answer.status == 400)
        #expect(answer.text.contains("at most 256 characters"))
        #expect(fixture.calls.all.isEmpty)
    }

    @Test(
        "a used, unknown or expired reset link says so, with the form for a new link",
        arguments: [
            (AuthReason.tokenExpired.error("expired"), 410, "This link has expired"),
            (AuthReason.invalidToken.error("invalid"), 400, "already used"),
        ])
    func resetLinkRefused(error: RPCError, status: Int, words: String) async throws {
        let fixture = PagesFixture.answering(AuthContract.resetPassword) { _ in throw error }
        let answer = await fixture.post("/reset-password", form: "token=\(Self.token)&password=amber-orchard&confirm=amber-orchard")
        #expect(answer.status == status)
        #expect(answer.text.contains(words))
        #expect(answer.text.contains("action=\"/reset-password/request\""))
        #expect(!answer.text.contains(Self.token), "a refused token is not put back into a page")
    }

    @Test("trouble while resetting shows the form again, to send once it has passed")
    func resetTrouble() async throws {
        let fixture = PagesFixture.answering(AuthContract.resetPassword) { _ in
            throw RPCError(code: .resourceExhausted, reason: "OVERLOADED", message: "busy")
        }
        let answer = await fixture.post("/reset-password", form: "token=\(Self.token)&password=amber-orchard&confirm=amber-orchard")
        #expect(answer.status == 503)
        #expect(answer.text.contains("Please try again in a moment"))
        #expect(answer.text.contains("name=\"token\" value=\"\(Self.token)\""))
    }

    @Test("a reset link or form without a token is answered 400 with the form for a new link")
    func resetWithoutToken() async throws {
        let fixture = PagesFixture.answering(AuthContract.resetPassword) { _ in Empty() }
        for answer in [
            await fixture.get("/reset-password", query: nil), await fixture.post("/reset-password", form: "password=a&confirm=a"),
        ] {
            #expect(answer.status == 400)
            #expect(answer.text.contains("This link is incomplete"))
            #expect(answer.text.contains("action=\"/reset-password/request\""))
        }
        #expect(fixture.calls.all.isEmpty)
    }

    @Test("the request form asks RequestPasswordReset and answers the same whether or not the address has an account")
    func requestsReset() async throws {
        let fixture = PagesFixture.answering(AuthContract.requestPasswordReset) { _ in Empty() }
        #expect(await fixture.get("/reset-password/request", query: nil).status == 200)
        let answer = await fixture.post("/reset-password/request", form: "email=ada%40example.com")
        #expect(answer.status == 200)
        #expect(answer.text.contains("If an account exists for <strong>ada@example.com</strong>"))
        #expect((fixture.calls.only?.request as? RequestPasswordResetRequest)?.email == "ada@example.com")
    }

    // MARK: HTTP

    @Test(
        "every page is HTML with a strict policy, no framing, no referrer, no caching, no sniffing, and no script or inline style",
        arguments: [
            ("GET", "/verify-email", "token=abc", ""), ("GET", "/verify-email", nil, ""), ("GET", "/reset-password", "token=abc", ""),
            ("POST", "/reset-password", nil, "token=abc&password=a&confirm=b"), ("GET", "/verify-email/resend", nil, ""),
            ("DELETE", "/reset-password", nil, ""), ("POST", "/verify-email/resend", nil, "email=a%40b.c"),
        ])
    func securityHeaders(method: String, path: String, query: String?, form: String) async throws {
        let fixture = PagesFixture.answering(AuthContract.verifyEmail) { _ in Self.user }
        let answer = await fixture.send(fixture.request(method, path, query: query, form: form))
        let headers = answer.headers
        #expect(headers["content-type"] == "text/html; charset=utf-8")
        let policy = try #require(headers["content-security-policy"])
        for directive in ["default-src 'none'", "style-src 'self'", "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'"] {
            #expect(policy.contains(directive), "\(policy)")
        }
        #expect(!policy.contains("unsafe") && !policy.contains("script-src"))
        #expect(headers["x-frame-options"] == "DENY")
        #expect(headers["referrer-policy"] == "no-referrer")
        #expect(headers["cache-control"] == "no-store")
        #expect(headers["x-content-type-options"] == "nosniff")
        #expect(answer.text.hasPrefix("<!doctype html>"))
        #expect(answer.text.contains("<link rel=\"stylesheet\" href=\"/account/pages.css\">"))
        for forbidden in ["<script", "<style", "style=", "javascript:"] {
            #expect(!answer.text.lowercased().contains(forbidden), "\(forbidden)")
        }
        #expect(answer.text.firstMatch(of: #/\son[a-z]+\s*=/#.ignoresCase()) == nil, "no event handler attribute")
    }

    @Test("the stylesheet is served as CSS, cacheable, to GET and HEAD")
    func stylesheet() async throws {
        let fixture = PagesFixture.answering(AuthContract.verifyEmail) { _ in Self.user }
        let css = await fixture.get("/account/pages.css", query: nil)
        #expect(css.status == 200)
        #expect(css.headers["content-type"] == "text/css; charset=utf-8")
        #expect(css.headers["x-content-type-options"] == "nosniff")
        #expect(css.text.contains("main {"))
        let head = await fixture.send(fixture.request("HEAD", "/account/pages.css"))
        #expect(head.status == 200 && head.body.isEmpty)
    }

    @Test(
        "another method is answered 405 with allow",
        arguments: [
            ("POST", "/verify-email", "GET"), ("HEAD", "/verify-email", "GET"), ("PUT", "/reset-password", "GET, POST"),
            ("DELETE", "/verify-email/resend", "GET, POST"), ("PATCH", "/reset-password/request", "GET, POST"),
            ("POST", "/account/pages.css", "GET, HEAD"),
        ])
    func wrongMethod(method: String, path: String, allow: String) async throws {
        let fixture = PagesFixture.answering(AuthContract.verifyEmail) { _ in Self.user }
        let answer = await fixture.send(fixture.request(method, path, query: "token=abc", form: "token=abc"))
        #expect(answer.status == 405)
        #expect(answer.headers["allow"] == allow)
        #expect(fixture.calls.all.isEmpty)
    }

    @Test(
        "a form in another content type is answered 415, without a call",
        arguments: ["application/json", "multipart/form-data; boundary=x", "text/plain", nil, "application/x-www-form-urlencodedx"])
    func wrongContentType(contentType: String?) async throws {
        let fixture = PagesFixture.answering(AuthContract.resetPassword) { _ in Empty() }
        for path in ["/reset-password", "/verify-email/resend", "/reset-password/request"] {
            let answer = await fixture.post(path, form: "token=abc&password=amber-orchard&confirm=amber-orchard&email=a%40b.c", contentType: contentType)
            #expect(answer.status == 415, "\(path)")
            #expect(answer.headers["accept-post"] == "application/x-www-form-urlencoded")
        }
        #expect(fixture.calls.all.isEmpty)
    }

    @Test("other paths are left to the rest of the web edge", arguments: ["/", "/verify-emails", "/verify-email/", "/reset-password/x", "/account/other.css", "/VERIFY-EMAIL"])
    func otherPaths(path: String) {
        let fixture = PagesFixture.answering(AuthContract.verifyEmail) { _ in Self.user }
        let response = CapturedWebResponse()
        #expect(!fixture.pages.serve(fixture.request("GET", path), response: response))
        #expect(response.captured.status == nil)
    }

    @Test(
        "hostile input is a clear 4xx, never a crash",
        arguments: [
            ("GET", "/verify-email", "token=%", ""), ("GET", "/verify-email", "token=%zz%e2%82", ""), ("GET", "/reset-password", "&&==&token", ""),
            ("POST", "/reset-password", nil, "%"), ("POST", "/reset-password", nil, "=&=&==&token&password"),
            ("POST", "/reset-password", nil, "token=%ff%fe&password=%00&confirm=%00%01"), ("POST", "/verify-email/resend", nil, "email=%ff"),
        ])
    func hostileInput(method: String, path: String, query: String?, form: String) async throws {
        let fixture = PagesFixture { router, _ in
            router.unary(AuthContract.verifyEmail) { _, _ in throw AuthReason.invalidToken.error("invalid") }
            router.unary(AuthContract.resetPassword) { _, _ in throw AuthReason.invalidToken.error("invalid") }
            router.unary(AuthContract.resendVerification) { _, _ in throw AuthReason.invalidEmail.invalidField("email", "bad") }
        }
        var request = fixture.request(method, path, query: query, form: form)
        request.body.append(contentsOf: [0xff, 0x00, 0xc3])
        let answer = await fixture.send(request)
        let status = try #require(answer.status)
        #expect((400..<500).contains(status), "\(status)")
    }

    @Test("HTML escapes the five characters that end text or an attribute")
    func escaping() {
        #expect(HTML.escape("<a href=\"x\" title='y'>&amp;</a> é") == "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt; é")
        let value = "\"><img src=x>"
        let html: HTML = "<input value=\"\(value)\">"
        #expect(html.markup == "<input value=\"&quot;&gt;&lt;img src=x&gt;\">")
    }

    @Test("form bodies decode + and %XX, keep the first of a repeated name, and survive bad escapes")
    func formDecoding() {
        let fields = AccountPages.decodeForm(Data("a=1+2%2B3&b=%zz&a=second&empty&=x&c=%E2%82%AC".utf8))
        #expect(fields["a"] == "1 2+3")
        #expect(fields["b"] == "%zz")
        #expect(fields["empty"] == "")
        #expect(fields["c"] == "€")
    }

    static let user = UserResponse(
        user: User(id: "u1", email: "ada@example.com", emailVerified: true, providers: ["password"], createdAt: "2026-01-01T00:00:00Z"))
}

/// ``AccountPages`` over a router with fake auth handlers, the calls they got, and the log.
private struct PagesFixture: Sendable {
    /// One call a fake handler got.
    struct Call: Sendable {
        let request: any Sendable
        let peer: String
        let requestID: String
        let metadata: Metadata
    }

    /// The calls the fake handlers got, in order. Thread-safe.
    final class Calls: Sendable {
        private let calls = Mutex<[Call]>([])

        func record(_ request: some Sendable, _ context: ServerContext) {
            calls.withLock {
                $0.append(Call(request: request, peer: context.peer, requestID: context.requestID, metadata: context.metadata))
            }
        }

        var all: [Call] { calls.withLock { $0 } }
        /// The one call, nil unless there was exactly one.
        var only: Call? { all.count == 1 ? all[0] : nil }
    }

    let pages: AccountPages
    let calls = Calls()
    let logs = CapturedLogs()

    /// Pages over a router that `register` sets up (handlers record their calls in `calls`).
    init(_ register: (inout Router, Calls) -> Void) {
        var router = Router()
        register(&router, calls)
        var logger = Logger(label: "account-pages-tests") { [logs] _ in logs }
        logger.logLevel = .trace
        pages = AccountPages(router: router, logger: logger)
    }

    /// Pages whose `method` answers with `answer`, recording each call.
    static func answering<Request, Response>(
        _ method: MethodDescriptor<Request, Response>, _ answer: @escaping @Sendable (Request) throws -> Response
    ) -> PagesFixture {
        PagesFixture { router, calls in
            router.unary(method) { request, context in
                calls.record(request, context)
                return try answer(request)
            }
        }
    }

    func request(
        _ method: String, _ path: String, query: String? = nil, form: String = "",
        contentType: String? = "application/x-www-form-urlencoded", peer: String = "192.0.2.7:40000"
    ) -> WebRequest {
        var headers: WebHeaders = ["host": "shop.test"]
        if method == "POST", let contentType { headers.add("content-type", contentType) }
        return WebRequest(
            method: method, path: path, query: query, headers: headers, body: method == "POST" ? Data(form.utf8) : Data(),
            peer: peer, version: "HTTP/1.1")
    }

    func send(_ request: WebRequest) async -> CapturedWebResponse.State {
        let response = CapturedWebResponse()
        #expect(pages.serve(request, response: response), "\(request.method) \(request.path) was not served")
        return await response.ended()
    }

    func get(_ path: String, query: String?, peer: String = "192.0.2.7:40000") async -> CapturedWebResponse.State {
        await send(request("GET", path, query: query, peer: peer))
    }

    func post(_ path: String, form: String, contentType: String? = "application/x-www-form-urlencoded") async -> CapturedWebResponse.State {
        await send(request("POST", path, form: form, contentType: contentType))
    }
}

private extension CapturedWebResponse.State {
    /// The body as text.
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// Every log line, message and metadata rendered as one string each. Thread-safe: the lines
/// are behind a Mutex; the handler's own properties are set before the logger is shared.
private final class CapturedLogs: LogHandler, @unchecked Sendable {
    private let captured = Mutex<[String]>([])
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let fields = metadata.merging(event.metadata ?? [:]) { $1 }
        let line = "\(event.level) \(event.message) " + fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        captured.withLock { $0.append(line) }
    }

    var lines: [String] { captured.withLock { $0 } }
}
