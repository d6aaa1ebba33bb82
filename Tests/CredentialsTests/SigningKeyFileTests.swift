import Credentials
import Foundation
import Testing

@Suite("Signing key files")
struct SigningKeyFileTests {
    /// A fresh empty directory for one test.
    private func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("credentials-tests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// The permission bits of the file at `path`.
    private func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return try #require((attributes[.posixPermissions] as? NSNumber)?.intValue)
    }

    @Test("a saved key loads back with its kid and signs tokens the original's JWK verifies",
        arguments: [JWSAlgorithm.edDSA, .es256])
    func roundTrip(algorithm: JWSAlgorithm) throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/signing-key.json"
        let key = try SigningKey.generate(algorithm: algorithm)
        try key.save(to: path)
        let loaded = try SigningKey.load(from: path)
        #expect(loaded.kid == key.kid)
        #expect(loaded.algorithm == algorithm)
        #expect(loaded.publicJWK == key.publicJWK)
        let token = try JWTSigner(key: loaded).sign(TokenFixtures.accessClaims())
        let claims = try TokenFixtures.accessVerifier([key]).verifyAccessToken(token, now: TokenFixtures.now)
        #expect(claims.subject == "user-1")
    }

    @Test("the key file has mode 0600, also when it replaces a more open file")
    func fileMode() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/signing-key.json"
        try SigningKey.generate().save(to: path)
        #expect(try mode(path) == 0o600)

        try FileManager.default.removeItem(atPath: path)
        #expect(FileManager.default.createFile(atPath: path, contents: Data("old".utf8), attributes: [.posixPermissions: 0o644]))
        #expect(try mode(path) == 0o644)
        try SigningKey.generate().save(to: path)
        #expect(try mode(path) == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["signing-key.json"])
    }

    @Test("the file holds the documented JSON members")
    func fileFormat() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/signing-key.json"
        let key = try SigningKey.generate()
        try key.save(to: path)
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: String])
        #expect(Set(object.keys) == ["alg", "kid", "privateKey"])
        #expect(object["alg"] == "EdDSA")
        #expect(object["kid"] == key.kid)
        #expect(try #require(object["privateKey"].flatMap { Base64URL.decode($0) }).count == 32)
    }

    @Test("missing and broken key files are reported, not trusted")
    func badFiles() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let missing = directory + "/missing.json"
        #expect(throws: SigningKey.KeyError.fileSystem(operation: "open", path: missing, errno: ENOENT)) {
            try SigningKey.load(from: missing)
        }
        let broken = directory + "/broken.json"
        let contents = [
            "not json", #"{"alg":"EdDSA","kid":"k"}"#, #"{"alg":"HS256","kid":"k","privateKey":"AAAA"}"#,
            #"{"alg":"EdDSA","kid":"","privateKey":"AAAA"}"#, #"{"alg":"EdDSA","kid":"k","privateKey":"A=="}"#,
        ]
        for content in contents {
            try Data(content.utf8).write(to: URL(fileURLWithPath: broken))
            #expect(throws: SigningKey.KeyError.invalidKeyFile(path: broken)) { try SigningKey.load(from: broken) }
        }
        try Data(#"{"alg":"EdDSA","kid":"k","privateKey":"AAAA"}"#.utf8).write(to: URL(fileURLWithPath: broken))
        #expect(throws: SigningKey.KeyError.invalidKeyMaterial) { try SigningKey.load(from: broken) }
    }

    @Test("RS256 keys cannot be made for signing")
    func noRSASigningKeys() {
        #expect(throws: SigningKey.KeyError.unsupportedAlgorithm(.rs256)) { try SigningKey.generate(algorithm: .rs256) }
        #expect(throws: SigningKey.KeyError.unsupportedAlgorithm(.rs256)) {
            try SigningKey(algorithm: .rs256, privateKey: Data(count: 32))
        }
    }
}
