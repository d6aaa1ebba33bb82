import Credentials
import Foundation
import Testing

@Suite("Password hashing with scrypt")
struct PasswordHasherTests {
    /// A hasher with cheap parameters (N = 2^logRounds, r = 1, p = 1) so the tests run fast.
    private func hasher(logRounds: Int = 4) throws -> PasswordHasher {
        let parameters = try #require(ScryptParameters(logRounds: logRounds, blockSize: 1, parallelism: 1))
        return PasswordHasher(parameters: parameters)
    }

    @Test("a hash is a PHC string with parameters, 16-byte salt and 32-byte hash in unpadded base64")
    func phcFormat() throws {
        let phc = try hasher().hash(password: "correct horse battery staple")
        let fields = phc.split(separator: "$", omittingEmptySubsequences: false)
        try #require(fields.count == 5)
        #expect(fields[0].isEmpty)
        #expect(fields[1] == "scrypt")
        #expect(fields[2] == "ln=4,r=1,p=1")
        #expect(fields[3].count == 22)
        #expect(fields[4].count == 43)
        #expect(!fields[3].contains("=") && !fields[4].contains("="))
        #expect(Data(base64Encoded: String(fields[4]) + "=")?.count == 32)
    }

    @Test("the right password verifies, a wrong one does not")
    func verify() throws {
        let hasher = try hasher()
        let phc = try hasher.hash(password: "correct horse battery staple")
        #expect(hasher.verify(password: "correct horse battery staple", against: phc) == (true, false))
        #expect(hasher.verify(password: "correct horse battery stapler", against: phc) == (false, false))
        #expect(hasher.verify(password: "Correct horse battery staple", against: phc) == (false, false))
        #expect(try hasher.hash(password: "same") != hasher.hash(password: "same"))
    }

    @Test("stored strings follow RFC 7914's test vector: ln is log2 N, then r, then p")
    func rfc7914Vector() throws {
        // scrypt("password", "NaCl", N = 1024, r = 8, p = 16, dkLen = 64), RFC 7914 §12.
        let hash = """
            /bq+HJ00cgB4VucZDQHp/nxq18vII3gw53N2Y0s3MWIurzDZLiKjiG/xCSedmDDaxyevuUqD7m2DYMvfoswGQA
            """
        let phc = "$scrypt$ln=10,r=8,p=16$TmFDbA$" + hash
        // The 4-byte salt is shorter than ours, so a match asks for a rehash.
        #expect(try hasher().verify(password: "password", against: phc) == (true, true))
        #expect(try hasher().verify(password: "passworD", against: phc) == (false, false))
    }

    @Test("a hash made with weaker parameters than today's needs a rehash, only once verified")
    func needsRehash() throws {
        let phc = try hasher(logRounds: 4).hash(password: "a long enough secret")
        #expect(try hasher(logRounds: 5).verify(password: "a long enough secret", against: phc) == (true, true))
        #expect(try hasher(logRounds: 5).verify(password: "wrong", against: phc) == (false, false))
        #expect(try hasher(logRounds: 4).verify(password: "a long enough secret", against: phc) == (true, false))
        #expect(try hasher(logRounds: 3).verify(password: "a long enough secret", against: phc) == (true, false))
        let wider = PasswordHasher(parameters: try #require(ScryptParameters(logRounds: 4, blockSize: 2, parallelism: 1)))
        #expect(wider.verify(password: "a long enough secret", against: phc) == (true, true))
    }

    @Test("the dummy hash has today's parameters and matches no password")
    func dummyHash() throws {
        let hasher = try hasher()
        #expect(hasher.dummyHash.hasPrefix("$scrypt$ln=4,r=1,p=1$"))
        #expect(hasher.verify(password: "", against: hasher.dummyHash) == (false, false))
        #expect(hasher.verify(password: "password", against: hasher.dummyHash) == (false, false))
        #expect(PasswordHasher().dummyHash.hasPrefix("$scrypt$ln=17,r=8,p=1$"))
    }

    @Test("an empty password is never hashed and never matches")
    func emptyPassword() throws {
        let hasher = try hasher()
        #expect(throws: PasswordHasher.HashError.emptyPassword) { try hasher.hash(password: "") }
        #expect(hasher.verify(password: "", against: try hasher.hash(password: "x")) == (false, false))
    }

    @Test("composed and decomposed spellings of a password are the same password")
    func unicodeNormalization() throws {
        let hasher = try hasher()
        let phc = try hasher.hash(password: "caf\u{E9} au lait")
        #expect(hasher.verify(password: "cafe\u{301} au lait", against: phc).valid)
    }

    @Test(
        "strings that are not our scrypt PHC strings never verify",
        arguments: [
            "", "$scrypt$", "password", "$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA",
            "$scrypt$ln=4,r=1,p=1$c2FsdHNhbHRzYWx0$", "$scrypt$ln=4,r=1,p=1$c2FsdHNhbHRzYWx0",
            "$scrypt$ln=04,r=1,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA",
            "$scrypt$r=1,ln=4,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA",
            "$scrypt$ln=40,r=1,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA",
            "$scrypt$ln=4,r=1,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA==",
            "$scrypt$ln=4,r=1,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA$extra",
            "$scrypt$ln=+4,r=1,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA",
        ])
    func rejectsForeignStrings(stored: String) throws {
        #expect(try hasher().verify(password: "password", against: stored) == (false, false))
    }

    @Test("parameters outside the bounds are refused")
    func parameterBounds() {
        #expect(ScryptParameters(logRounds: 0, blockSize: 8, parallelism: 1) == nil)
        #expect(ScryptParameters(logRounds: 25, blockSize: 1, parallelism: 1) == nil)
        #expect(ScryptParameters(logRounds: 20, blockSize: 16, parallelism: 1) == nil)
        #expect(ScryptParameters(logRounds: 17, blockSize: 8, parallelism: 0) == nil)
        #expect(ScryptParameters(logRounds: 17, blockSize: 8, parallelism: 1) == .owasp)
        #expect(ScryptParameters.owasp.description == "ln=17,r=8,p=1")
        #expect(ScryptParameters.owasp.rounds == 131_072)
    }

    @Test("hashing works at the full OWASP parameters (slow on purpose: 128 MiB per hash)")
    func owaspParameters() throws {
        let hasher = PasswordHasher()
        let phc = try hasher.hash(password: "correct horse battery staple")
        #expect(phc.hasPrefix("$scrypt$ln=17,r=8,p=1$"))
        #expect(hasher.verify(password: "correct horse battery staple", against: phc) == (true, false))
    }
}
