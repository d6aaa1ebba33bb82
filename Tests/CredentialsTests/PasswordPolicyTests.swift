import Credentials
import Testing

@Suite("Password policy")
struct PasswordPolicyTests {
    /// The account's address in every case.
    static let email = "Alice.Example@Mail.com"

    @Test(
        "each password gets the expected verdict",
        arguments: [
            ("k3v!n9x", PasswordProblem.tooShort(minimum: 8)),
            ("k3v!n9xq", nil),
            (String(repeating: "k3v!n9xq", count: 32), nil),
            (String(repeating: "k3v!n9xq", count: 32) + "z", .tooLong(maximum: 256)),
            ("alice.example@mail.com", .equalsEmail),
            ("ALICE.EXAMPLE@MAIL.COM", .equalsEmail),
            ("Alice.Example", .equalsEmail),
            ("alice.example!", nil),
            ("password", .tooCommon),
            ("Password1", .tooCommon),
            ("P@ssw0rd", .tooCommon),
            ("12345678", .tooCommon),
            ("qwertyuiop", .tooCommon),
            ("1q2w3e4r", .tooCommon),
            ("iloveyou", .tooCommon),
            ("Summer2024", .tooCommon),
            ("michael123", .tooCommon),
            ("11111111", .tooCommon),
            ("19871987", .tooCommon),
            ("correct horse battery staple", nil),
        ] as [(String, PasswordProblem?)])
    func verdicts(password: String, problem: PasswordProblem?) {
        #expect(PasswordPolicy().check(password: password, email: Self.email) == problem)
    }

    @Test("length counts grapheme clusters, not bytes or code points")
    func unicodeLength() {
        let policy = PasswordPolicy()
        // Eight "é" spelled with a combining accent: 16 code points, 8 characters.
        let decomposed = String(repeating: "e\u{301}", count: 8)
        #expect(decomposed.unicodeScalars.count == 16)
        #expect(policy.check(password: decomposed, email: Self.email) == nil)
        #expect(policy.check(password: String(decomposed.dropLast()), email: Self.email) == .tooShort(minimum: 8))
        // Seven family emoji: 175 UTF-8 bytes, 7 characters.
        let family = String(repeating: "👨‍👩‍👧‍👦", count: 7)
        #expect(family.utf8.count > 100)
        #expect(policy.check(password: family, email: Self.email) == .tooShort(minimum: 8))
        #expect(policy.check(password: "пароль-надёжный", email: Self.email) == nil)
    }

    @Test("a few characters carrying thousands of combining marks are too long")
    func combiningMarkFlood() {
        let heavy = String(repeating: "a" + String(repeating: "\u{301}", count: 600), count: 8)
        #expect(heavy.count == 8)
        #expect(PasswordPolicy().check(password: heavy, email: Self.email) == .tooLong(maximum: 256))
    }

    @Test("the built-in list of common passwords has at least 300 entries")
    func listSize() {
        #expect(PasswordPolicy.commonPasswordCount >= 300)
    }

    @Test("bounds are configurable")
    func customBounds() {
        let policy = PasswordPolicy(minimumLength: 12, maximumLength: 64)
        #expect(policy.check(password: "k3v!n9xq", email: Self.email) == .tooShort(minimum: 12))
        #expect(policy.check(password: "k3v!n9xq-long", email: Self.email) == nil)
    }
}
