import Contracts
import Credentials
import Foundation
@testable import StorefrontKit
import Testing

/// The stores a session is kept in between launches.
@Suite("StorefrontKit credential stores")
struct CredentialStoreTests {
    static let session = StoredSession(
        accessToken: "a.b.c", refreshToken: "r-1", accessTokenExpiresAt: Date(timeIntervalSince1970: 1_900_000_000),
        user: User(id: "u-1", email: "u@example.com", emailVerified: true, providers: ["password"], createdAt: "2026-01-01T00:00:00Z"))

    @Test("The file store writes 0600 in a 0700 directory it makes, reads back, replaces and removes")
    func fileStore() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kit-store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let store = FileCredentialStore(file: root.appendingPathComponent("nested/session.json"))
        #expect(try store.load() == nil)
        try store.save(Self.session)
        #expect(try Self.permissions(store.file.path) == 0o600)
        #expect(try Self.permissions(store.file.deletingLastPathComponent().path) == 0o700)
        #expect(try store.load() == Self.session)
        var renewed = Self.session
        renewed.refreshToken = "r-2"
        try store.save(renewed)
        #expect(try store.load() == renewed)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.file.deletingLastPathComponent().path) == ["session.json"])
        try store.remove()
        try store.remove()
        #expect(try store.load() == nil)
    }

    @Test("The memory store keeps one session")
    func memoryStore() {
        let store = MemoryCredentialStore()
        store.save(Self.session)
        #expect(store.load() == Self.session)
        store.remove()
        #expect(store.load() == nil)
    }

    @Test("A stored session never prints its tokens")
    func redacted() {
        #expect(!"\(Self.session)".contains("r-1"))
        #expect(!"\(Self.session)".contains("a.b.c"))
    }

    @Test("The Apple nonce's hash is what auth-svc checks the token's nonce against")
    func appleNonce() {
        #expect(AppleSignInNonce(raw: "abc").hashed == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let nonce = AppleSignInNonce()
        #expect(nonce.raw.count == 32)
        #expect(nonce.hashed == AppleNonce.hash(rawNonce: nonce.raw))
        #expect(AppleSignInNonce().raw != nonce.raw)
    }

    /// The permission bits of `path`.
    static func permissions(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) & 0o777
    }
}
