@testable import RPC
import Testing

@Suite("RequestID")
struct RequestIDTests {
    @Test("a request id is 15 lower-case hex digits")
    func format() {
        for _ in 0..<200 {
            let id = RequestID.make()
            #expect(id.count == 15)
            #expect(id.allSatisfy { "0123456789abcdef".contains($0) }, "\(id)")
        }
    }

    @Test("request ids differ from call to call")
    func unique() {
        let ids = Set((0..<1_000).map { _ in RequestID.make() })
        #expect(ids.count == 1_000)
    }

    @Test("made-up ids are the process prefix (7 hex digits) then a counter (8), zero-padded")
    func prefixAndCounter() throws {
        let first = RequestID.make()
        let second = RequestID.make()
        #expect(first.prefix(7) == second.prefix(7))
        let a = try #require(UInt32(first.suffix(8), radix: 16))
        let b = try #require(UInt32(second.suffix(8), radix: 16))
        // One apart, or a few when calls elsewhere in the process took ids in between; digits in
        // the wrong order would put them far apart.
        #expect((1..<1_000).contains(b &- a), "\(first) then \(second)")
        #expect(RequestID("given-id").description == "given-id")
    }

    @Test("after 2^32 ids a process's ids take a new prefix rather than repeating")
    func wrapTakesNewPrefix() {
        let last = RequestID.generated(sequence: 0xFFFF_FFFF).description
        let next = RequestID.generated(sequence: 0x1_0000_0000).description
        let first = RequestID.generated(sequence: 0).description
        #expect(last.suffix(8) == "ffffffff" && next.suffix(8) == "00000000" && first.suffix(8) == "00000000")
        #expect(next != first, "the ids of the second 2^32 calls repeat the first ones: \(next)")
        #expect(next.prefix(7) != last.prefix(7))
        // Rounds keep their prefixes apart.
        let prefixes = Set((0..<64).map { RequestID.generated(sequence: UInt64($0) << 32).description.prefix(7) })
        #expect(prefixes.count == 64)
        #expect(next.count == 15 && next.allSatisfy { "0123456789abcdef".contains($0) }, "\(next)")
    }

    /// 64 visible ASCII characters: every printable byte from `!` to `~`, then padding.
    static let longestAccepted = String((0x21...0x7E).map { Character(UnicodeScalar(UInt8($0))) }.prefix(64))

    @Test("a caller's id of 1 to 64 visible ASCII characters is taken as it is", arguments: [
        "a", "given-id", longestAccepted, String(repeating: "~", count: 64), "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}",
    ])
    func accepted(id: String) {
        let requestID = RequestID(id)
        #expect(requestID.description == id)
        #expect(requestID.clientNote == nil)
    }

    @Test("a caller's id that is too long, empty, or has a space, a control or a non-ASCII character is replaced and noted", arguments: [
        String(repeating: "a", count: 65), String(repeating: "x", count: 15_000), "", "two words", "tab\there", "line\nbreak",
        "nul\u{0}", "del\u{7F}", "caf\u{E9}", "\u{1F600}",
    ])
    func replaced(id: String) throws {
        let requestID = RequestID(id)
        let made = requestID.description
        #expect(made.count == 15 && made.allSatisfy { "0123456789abcdef".contains($0) }, "\(made)")
        let note = try #require(requestID.clientNote)
        // Bounded whatever was sent, in visible ASCII only, and saying how long the id was.
        #expect(note.utf8.count <= RequestID.noteLength + 3 + 2 + 20, "\(note)")
        #expect(note.utf8.allSatisfy { $0 >= 0x21 && $0 <= 0x7E }, "\(note)")
        #expect(note.hasSuffix("[\(id.utf8.count)B]"), "\(note)")
        #expect(note.contains("...") == (id.utf8.count > RequestID.noteLength), "\(note)")
        #expect(RequestID(id) != requestID, "two replaced ids are the same")
    }

    @Test("the note of a replaced id keeps its first 32 bytes, odd ones as ?")
    func noteShape() {
        #expect(RequestID(String(repeating: "a", count: 65)).clientNote == String(repeating: "a", count: 32) + "...[65B]")
        #expect(RequestID("two words").clientNote == "two?words[9B]")
        #expect(RequestID("a=\"b\" ").clientNote == "a??b??[6B]")
    }
}
