import RPC
import Testing

@Suite("PercentEncoding")
struct PercentEncodingTests {
    @Test("printable ASCII other than % is left as it is")
    func printableASCIIUnchanged() {
        // Between two letters: a space that starts or ends the text is encoded (next test).
        let printable = "a" + String(decoding: (UInt8(0x20)...0x7E).filter { $0 != 0x25 }, as: UTF8.self) + "z"
        #expect(PercentEncoding.encode(printable) == printable)
        #expect(PercentEncoding.decode(printable) == printable)
    }

    @Test(
        "percent, control characters and non-ASCII are written as upper-case %XX of their UTF-8 bytes",
        arguments: [
            ("100%", "100%25"),
            ("%25", "%2525"),
            ("line\nbreak", "line%0Abreak"),
            ("tab\there", "tab%09here"),
            ("\u{7F}", "%7F"),
            ("é", "%C3%A9"),
            ("héllo ✓ 世界", "h%C3%A9llo %E2%9C%93 %E4%B8%96%E7%95%8C"),
            ("🛒", "%F0%9F%9B%92"),
            ("", ""),
            // An HTTP/2 field value must not start or end with whitespace (RFC 9113 §8.2.1).
            (" leading", "%20leading"),
            ("trailing ", "trailing%20"),
            (" ", "%20"),
            ("in between", "in between"),
        ])
    func encodes(text: String, encoded: String) {
        #expect(PercentEncoding.encode(text) == encoded)
        #expect(PercentEncoding.decode(encoded) == text)
    }

    @Test(
        "any text survives a round trip",
        arguments: ["héllo ✓ 世界", "a\nb\r\nc", "50% off, then 100%!", "%%%", "%41 is not A", "\u{0}nul", "emoji 👩‍👩‍👧"])
    func roundTrip(text: String) {
        #expect(PercentEncoding.decode(PercentEncoding.encode(text)) == text)
    }

    @Test("malformed escapes are kept as they are", arguments: ["%", "%4", "%ZZ", "50% off", "abc%", "abc%4", "%G1", "%1G"])
    func malformedKept(text: String) {
        #expect(PercentEncoding.decode(text) == text)
    }

    @Test("a stray percent before a valid escape is kept and the escape still decodes")
    func strayPercentBeforeEscape() {
        #expect(PercentEncoding.decode("%%41") == "%A")
        #expect(PercentEncoding.decode("100%%21") == "100%!")
    }

    @Test("lower-case and mixed-case hex digits decode", arguments: [("%c3%a9", "é"), ("%e2%9C%93", "✓"), ("%2f", "/")])
    func lowercaseHex(encoded: String, text: String) {
        #expect(PercentEncoding.decode(encoded) == text)
    }

    @Test("an escape at the very end of the text decodes")
    func escapeAtEnd() {
        #expect(PercentEncoding.decode("done%21") == "done!")
        #expect(PercentEncoding.decode("%21") == "!")
    }
}
