import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// The pages a mailed link opens, end to end: auth-svc mails links under its `--public-url`,
/// the gateway listening there serves them over HTTP/1.1, and curl opens them as they are.
@Suite("Account pages, live")
struct AccountPagesLiveTests {
    @Test("a verification link from the mailed .eml, opened with curl, verifies the address; opened again it says it was used")
    func verificationLink() async throws {
        try await withPublicGateway { stack, publicURL in
            let email = "pages-\(UUID().uuidString.prefix(8).lowercased())@example.com"
            _ = try await stack.gateway.unary(
                AuthContract.signUp, SignUpRequest(email: email, password: ServiceStack.shopperPassword), options: plain())
            let mail = try await AuthMailbox(authDataDirectory: stack.dataDirectory(.auth)).latestMail(to: email, kind: .verifyEmail)
            let link = try #require(Self.link(in: mail, startingWith: "\(publicURL)/verify-email?token="), "\(mail.body)")
            let token = try #require(mail.token)

            let page = try await Self.curl(link)
            #expect(page.status == 200, "\(page)")
            #expect(page.body.contains("Your email address is verified"))
            #expect(page.body.contains(email))
            #expect(page.headers["content-security-policy"]?.contains("default-src 'none'") == true)
            #expect(page.headers["x-frame-options"] == "DENY")
            #expect(page.headers["referrer-policy"] == "no-referrer")
            #expect(page.headers["cache-control"] == "no-store")

            let session = try await stack.gateway.unary(
                AuthContract.signIn, SignInRequest(email: email, password: ServiceStack.shopperPassword), options: plain())
            #expect(session.user.emailVerified, "signing in works only once the address is verified")

            let again = try await Self.curl(link)
            #expect(again.status == 400)
            #expect(again.body.contains("already used"))

            let css = try await Self.curl("\(publicURL)/account/pages.css")
            #expect(css.status == 200 && css.headers["content-type"] == "text/css; charset=utf-8")

            let lines = try stack.service(.gateway).log.lines
            #expect(lines.contains { $0.contains("method=/verify-email ") }, "one call line per page request")
            #expect(!lines.contains { $0.contains(token) }, "the token reached the gateway's log")
        }
    }

    @Test("a reset link from the mailed .eml shows the form; posting it refuses a weak password, then sets a good one")
    func resetLink() async throws {
        try await withPublicGateway { stack, publicURL in
            let email = "pages-\(UUID().uuidString.prefix(8).lowercased())@example.com"
            let accounts = try stack.accounts(through: .gateway)
            _ = try await accounts.signedInUser(email)

            // Asked for from the page's own form, as a person whose link expired would.
            let asked = try await Self.curl("\(publicURL)/reset-password/request", form: ["email": email])
            #expect(asked.status == 200)
            #expect(asked.body.contains("If an account exists for"))
            let mail = try await AuthMailbox(authDataDirectory: stack.dataDirectory(.auth)).latestMail(to: email, kind: .resetPassword)
            let link = try #require(Self.link(in: mail, startingWith: "\(publicURL)/reset-password?token="), "\(mail.body)")
            let token = try #require(mail.token)

            let form = try await Self.curl(link)
            #expect(form.status == 200)
            #expect(form.body.contains("<input type=\"hidden\" name=\"token\" value=\"\(token)\">"))

            let weak = try await Self.curl("\(publicURL)/reset-password", form: ["token": token, "password": "password", "confirm": "password"])
            #expect(weak.status == 400)
            #expect(weak.body.contains("too common"), "auth-svc's reason, through the gateway: \(weak.body)")

            let newPassword = "quiet-harbour-lantern-31"
            let done = try await Self.curl("\(publicURL)/reset-password", form: ["token": token, "password": newPassword, "confirm": newPassword])
            #expect(done.status == 200, "\(done)")
            #expect(done.body.contains("Your password is changed"))

            _ = try await stack.gateway.unary(
                AuthContract.signIn, SignInRequest(email: email, password: newPassword), options: plain())
            _ = await expectRPCError(AuthReason.invalidCredentials) {
                _ = try await stack.gateway.unary(
                    AuthContract.signIn, SignInRequest(email: email, password: ServiceStack.shopperPassword), options: plain())
            }
            let used = try await Self.curl("\(publicURL)/reset-password", form: ["token": token, "password": newPassword, "confirm": newPassword])
            #expect(used.status == 400 && used.body.contains("already used"))
            #expect(try !stack.service(.gateway).log.lines.contains { $0.contains(token) || $0.contains(newPassword) })
        }
    }

    /// The line of `mail`'s body that starts with `prefix`: the link as mailed.
    static func link(in mail: DeliveredMail, startingWith prefix: String) -> String? {
        mail.body.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.first { $0.hasPrefix(prefix) }
    }

    /// What curl got: the status, the headers (names lower-cased) and the body.
    struct Page: CustomStringConvertible {
        var status: Int
        var headers: [String: String]
        var body: String
        var description: String { "\(status) \(headers)\n\(body)" }
    }

    /// Fetches `url` with curl over HTTP/1.1, as a browser opening a link would (a POST of
    /// `form`, URL-encoded, when there is one).
    static func curl(_ url: String, form: [String: String]? = nil) async throws -> Page {
        var arguments = ["-s", "-i", "--http1.1", "--max-time", "20"]
        for (name, value) in form?.sorted(by: { $0.key < $1.key }) ?? [] {
            arguments += ["--data-urlencode", "\(name)=\(value)"]
        }
        let result = try await Command.run("curl", arguments + [url], timeout: .seconds(30))
        try #require(result.status == 0, "curl \(url): \(result)")
        let text = result.output.replacingOccurrences(of: "\r\n", with: "\n")
        let (head, body) = try #require(text.firstRange(of: "\n\n").map { (text[..<$0.lowerBound], text[$0.upperBound...]) })
        let lines = head.split(separator: "\n")
        let status = try #require(lines.first?.split(separator: " ").dropFirst().first.flatMap { Int($0) }, "\(text)")
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Page(status: status, headers: headers, body: String(body))
    }
}

/// Runs `body` against the four services and a gateway on a port chosen first, so that
/// auth-svc's `--public-url` (given the URL passed to `body`) is the gateway's own address and
/// every mailed link works as it is.
func withPublicGateway(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: (ServiceStack, String) async throws -> Void
) async throws {
    let port = try #require(try FreePorts.take(1).first)
    let publicURL = "http://127.0.0.1:\(port)"
    try await withServiceStack(
        ServiceName.allCases, extraArguments: [.auth: ["--public-url", publicURL]], ports: [.gateway: port],
        sourceLocation: sourceLocation
    ) { stack in
        try await body(stack, publicURL)
    }
}
