import RPC
import Testing

/// ``ClientInput``: client input quoted in a message is bounded.
@Suite("Client input in messages")
struct ClientInputTests {
    @Test("input of up to 64 characters is quoted whole; longer is cut to 64 and marked", arguments: [
        ("abc", "abc"), (String(repeating: "a", count: 64), String(repeating: "a", count: 64)),
        (String(repeating: "a", count: 65), String(repeating: "a", count: 64) + "…"),
        (String(repeating: "é", count: 100_000), String(repeating: "é", count: 64) + "…"),
        ("line\nbreak\u{0}", "line?break?"),
    ])
    func quoted(input: String, expected: String) {
        #expect(ClientInput.quoted(input) == expected)
    }

    @Test("one character of many combining scalars is cut too")
    func combining() {
        let input = "e" + String(repeating: "\u{301}", count: 10_000)
        #expect(ClientInput.quoted(input).unicodeScalars.count == 65)
    }
}
