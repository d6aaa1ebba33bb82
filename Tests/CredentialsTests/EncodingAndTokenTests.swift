import Credentials
import Foundation
import Testing

@Suite("Base64url, opaque tokens and constant-time comparison")
struct EncodingAndTokenTests {
    @Test(
        "base64url matches the RFC 4648 §10 vectors, unpadded",
        arguments: [
            ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"),
            ("foobar", "Zm9vYmFy"),
        ])
    func vectors(plain: String, encoded: String) {
        #expect(Base64URL.encode(Data(plain.utf8)) == encoded)
        #expect(Base64URL.decode(encoded) == Data(plain.utf8))
    }

    @Test("base64url uses - and _ where standard base64 uses + and /")
    func urlAlphabet() {
        #expect(Base64URL.encode([0xFB, 0xFF, 0xBF]) == "-_-_")
        #expect(Base64URL.decode("-_-_") == Data([0xFB, 0xFF, 0xBF]))
    }

    @Test(
        "base64url decoding rejects anything but canonical unpadded text",
        arguments: ["Zg==", "Zm8=", "+/+/", "Zm9v/", "Z", "Zm9vY", "Zh", "Zm9", "Zm 9v", "Zm9v\n", "Zé", "Zm\u{0}v"])
    func strictDecoding(text: String) {
        #expect(Base64URL.decode(text) == nil)
    }

    @Test("base64url round-trips every length of random bytes")
    func roundTrip() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == Data(bytes))
        }
    }

    @Test("an opaque token is 32 random bytes as 43 base64url characters")
    func tokenShape() throws {
        let token = OpaqueToken.generate()
        #expect(token.count == 43)
        #expect(try #require(Base64URL.decode(token)).count == 32)
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        #expect(token.allSatisfy(alphabet.contains))
    }

    @Test("an opaque token never starts with '-', which a command line would read as an option")
    func tokenNeverStartsWithDash() {
        // First bytes that encode as "-" (0xF8...0xFB), then one that does not.
        var generator = ScriptedBytes([0xF8, 0xFB] + Array(repeating: 0xF9, count: 31) + [0x41])
        let token = OpaqueToken.generate(using: &generator)
        #expect(token.count == 43)
        #expect(token.hasPrefix("Q"), "the first byte drawn again (0x41 encodes as Q): \(token)")
        // The rest as drawn; 0xF9, the first byte's second draw, encodes as "-" too.
        #expect(Base64URL.decode(token).map { Array($0) } == [0x41, 0xFB] + Array(repeating: 0xF9, count: 30))
        // One token in 64 would start with "-" if nothing prevented it.
        #expect(!(0..<2000).contains { _ in OpaqueToken.generate().hasPrefix("-") })
    }

    @Test("opaque tokens do not repeat")
    func tokenUniqueness() {
        let tokens = (0..<1000).map { _ in OpaqueToken.generate() }
        #expect(Set(tokens).count == 1000)
    }

    @Test("a token's stored hash is its lowercase hex SHA-256")
    func tokenHash() {
        // SHA-256("abc"), FIPS 180-2 appendix B.1.
        #expect(OpaqueToken.hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let token = OpaqueToken.generate()
        #expect(OpaqueToken.hash(token).count == 64)
        #expect(OpaqueToken.hash(token) == OpaqueToken.hash(token))
        #expect(OpaqueToken.hash(token) != OpaqueToken.hash(OpaqueToken.generate()))
    }

    @Test("constant-time comparison agrees with ordinary equality")
    func constantTime() {
        #expect(ConstantTime.equals("admin-key-1", "admin-key-1"))
        #expect(!ConstantTime.equals("admin-key-1", "admin-key-2"))
        #expect(!ConstantTime.equals("admin-key-1", "admin-key-10"))
        #expect(!ConstantTime.equals("", "x"))
        #expect(ConstantTime.equals("", ""))
        #expect(ConstantTime.equals([1, 2, 3], [1, 2, 3]))
        #expect(!ConstantTime.equals([1, 2, 3], [1, 2, 4]))
        #expect(!ConstantTime.equals([1, 2, 3], [1, 2]))
    }
}

/// A generator that hands out the given bytes in order (each `next()` one byte, zero-extended,
/// as `UInt8.random(in:using:)` reads only the low byte), then zeros.
private struct ScriptedBytes: RandomNumberGenerator {
    private var bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    mutating func next() -> UInt64 {
        bytes.isEmpty ? 0 : UInt64(bytes.removeFirst())
    }
}
