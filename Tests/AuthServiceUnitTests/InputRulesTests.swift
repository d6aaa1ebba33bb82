@testable import auth_svc
import RPC
import Testing
import JSON

/// `InputRules`: which email addresses and display names auth-svc accepts, and the errors it
/// answers the others with.
@Suite("InputRules: emails and display names")
struct InputRulesTests {
    @Test(
        "valid addresses are trimmed and lower-cased",
        arguments: [
            ("Ada@Example.COM", "ada@example.com"),
            ("  ada@example.com  ", "ada@example.com"),
            ("ada+shop@example.com", "ada+shop@example.com"),
            ("first.last@mail.eu.example.org", "first.last@mail.eu.example.org"),
            ("o'brien@my-shop.example", "o'brien@my-shop.example"),
            ("x@a.co", "x@a.co"),
            (String(repeating: "l", count: 64) + "@example.com", String(repeating: "l", count: 64) + "@example.com"),
        ])
    func validEmails(raw: String, normalized: String) {
        #expect(InputRules.normalizedEmail(raw) == normalized)
    }

    @Test(
        "invalid addresses are refused",
        arguments: [
            "",
            "   ",
            "ada.example.com",
            "ada@@example.com",
            "ada@shop@example.com",
            ".ada@example.com",
            "ada.@example.com",
            "ada..lovelace@example.com",
            "ada@localhost",
            "ada@example..com",
            "ada@.example.com",
            "ada@example.com.",
            "ada@-shop.example.com",
            "ada@shop-.example.com",
            "josé@example.com",
            "ada@exämple.com",
            "ada lovelace@example.com",
            "ada@exa mple.com",
            "ada@example.com\nBcc: x@y.z",
            "@example.com",
            "ada@",
            String(repeating: "l", count: 65) + "@example.com",
        ])
    func invalidEmails(raw: String) {
        #expect(InputRules.normalizedEmail(raw) == nil)
    }

    @Test("the longest address is 254 bytes; 255 bytes is refused")
    func lengthLimit() {
        // 64 + 1 + 189 = 254 bytes: a full local part and a domain of three 61-byte labels plus ".com".
        let label = String(repeating: "d", count: 61)
        let domain254 = "\(label).\(label).\(label).com"
        let local = String(repeating: "l", count: 64)
        #expect((local + "@" + domain254).utf8.count == 254)
        #expect(InputRules.normalizedEmail(local + "@" + domain254) != nil)
        let domain255 = "\(label).\(label).\(label)d.com"
        #expect((local + "@" + domain255).utf8.count == 255)
        #expect(InputRules.normalizedEmail(local + "@" + domain255) == nil)
    }

    @Test("requireEmail names the field in an INVALID_ARGUMENT with reason INVALID_EMAIL")
    func requireEmailError() throws {
        #expect(try InputRules.requireEmail("Ada@Example.com") == "ada@example.com")
        let error = try #require(throws: RPCError.self) { try InputRules.requireEmail("not-an-address") }
        #expect(error.code == .invalidArgument)
        #expect(error.reason == "INVALID_EMAIL")
        let violations = try #require(error.details?["fieldViolations"]?.arrayValue)
        #expect(violations.count == 1)
        #expect(violations.first?["field"]?.stringValue == "email")

        #expect(error.message == "The email address is not valid (expected name@example.com).")

        let field = RequestField(path: "newEmail", subject: "The new email address")
        let renamed = try #require(throws: RPCError.self) { try InputRules.requireEmail("", field: field) }
        #expect(renamed.details?["fieldViolations"]?.arrayValue?.first?["field"]?.stringValue == "newEmail")
        #expect(renamed.message == "The new email address is required.")
    }

    @Test(
        "display names are trimmed, and an empty one clears the name",
        arguments: [
            ("  Ada Lovelace ", "Ada Lovelace"),
            ("Zoë 🎉", "Zoë 🎉"),
            ("李小龍", "李小龍"),
            ("", nil),
            ("   \n", nil),
            (String(repeating: "a", count: 100), String(repeating: "a", count: 100)),
        ] as [(String, String?)])
    func acceptedDisplayNames(raw: String, stored: String?) throws {
        #expect(try InputRules.displayName(raw) == stored)
    }

    @Test("an absent display name stays absent")
    func absentDisplayName() throws {
        #expect(try InputRules.displayName(nil) == nil)
    }

    @Test(
        "display names that are too long or hold control or invisible formatting characters are refused",
        arguments: [
            String(repeating: "a", count: 101),
            "Ada\u{0}Lovelace",
            "Ada\u{7}",
            "Ada\nLovelace",
            "Ada\u{202E}ecalevoL",
            "Ada\u{200B}Lovelace",
            "Ada\u{2028}Lovelace",
        ])
    func refusedDisplayNames(raw: String) throws {
        let error = try #require(throws: RPCError.self) { try InputRules.displayName(raw) }
        #expect(error.code == .invalidArgument)
        #expect(error.details?["fieldViolations"]?.arrayValue?.first?["field"]?.stringValue == "displayName")
    }
}
