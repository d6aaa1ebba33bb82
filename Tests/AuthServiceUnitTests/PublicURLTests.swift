import ArgumentParser
@testable import auth_svc
import Testing

/// `--public-url`: the gateway's address that mailed links open (API.md §9).
@Suite("auth-svc public URL")
struct PublicURLTests {
    @Test("--public-url, and its older name --link-base-url, set the base of mailed links", arguments: ["--public-url", "--link-base-url"])
    func flag(name: String) throws {
        let command = try AuthCommand.parse([name, "https://shop.example.com"])
        #expect(command.publicURL == "https://shop.example.com")
    }

    @Test("without the flag: SHOP_PUBLIC_URL, else SHOP_LINK_BASE_URL, else http://127.0.0.1:8080")
    func precedence() {
        let both = ["SHOP_PUBLIC_URL": "https://new.example", "SHOP_LINK_BASE_URL": "https://old.example"]
        #expect(AuthCommand.publicURL(flag: "https://flag.example", environment: both) == "https://flag.example")
        #expect(AuthCommand.publicURL(flag: nil, environment: both) == "https://new.example")
        #expect(AuthCommand.publicURL(flag: nil, environment: ["SHOP_LINK_BASE_URL": "https://old.example"]) == "https://old.example")
        #expect(AuthCommand.publicURL(flag: nil, environment: [:]) == "http://127.0.0.1:8080")
    }

    @Test(
        "an http or https URL with a host, with or without a port and path, is accepted",
        arguments: ["http://127.0.0.1:8080", "https://shop.example.com/", "https://shop.example.com/store", "HTTPS://Shop.Example.COM:8443"])
    func accepted(url: String) throws {
        #expect(AuthConfiguration.problem(withPublicURL: url) == nil)
        #expect(try AuthCommand.parse(["--public-url", url]).publicURL == url)
    }

    @Test(
        "anything else is refused at start with a message naming the flag",
        arguments: [
            "", "shop.example.com", "ftp://shop.example.com", "http://", "https://shop.example.com/?a=1",
            "https://shop.example.com?", "https://shop.example.com/#top", "https://ada:secret@shop.example.com",
            "http://shop example.com", "http://shop.example.com\n", "javascript:alert(1)",
        ])
    func refused(url: String) {
        do {
            _ = try AuthCommand.parse(["--public-url", url])
            Issue.record("--public-url \(url) was accepted")
        } catch {
            let message = AuthCommand.message(for: error)
            #expect(message.contains("--public-url"), "\(message)")
            #expect(!message.contains("secret"), "a password in the URL is not repeated")
        }
    }

    @Test("mailed links are <public-url>/verify-email?token=… and /reset-password?token=…, trailing slashes dropped")
    func links() {
        let emails = AuthEmails(linkBaseURL: "https://shop.example.com/store//")
        #expect(emails.verification(to: "ada@example.com", token: "T0k").body.contains("\nhttps://shop.example.com/store/verify-email?token=T0k\n"))
        #expect(emails.passwordReset(to: "ada@example.com", token: "T0k").body.contains("\nhttps://shop.example.com/store/reset-password?token=T0k\n"))
    }
}
