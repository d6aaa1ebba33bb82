@testable import auth_svc
import Contracts
import Credentials
import Foundation
import RPC
import Testing

/// `IdentityProviders` verifying Google and Apple ID tokens against JWK Sets the tests publish:
/// in a file (re-read when a new `kid` appears) and at an HTTP URL.
@Suite("IdentityProviders: verifying provider ID tokens")
struct IdentityProvidersTests {
    typealias Tokens = ProviderTokens

    /// What is wrong with a token in the refusal table.
    enum Defect: String, CaseIterable, Sendable {
        case wrongAudience, wrongIssuer, expired, unpublishedKey, unknownKeyID
    }

    /// Providers with Google configured over the key set in `directory`.
    private func google(_ directory: KeySetDirectory) -> IdentityProviders {
        IdentityProviders([.google(clientIDs: [Tokens.googleClientID, "ios-client"], jwks: directory.file)])
    }

    @Test(
        "a Google ID token verifies under either of Google's issuer spellings, answered in the canonical one",
        arguments: ["https://accounts.google.com", "accounts.google.com"])
    func googleAccepted(issuer: String) async throws {
        let directory = try KeySetDirectory()
        defer { directory.remove() }
        let key = try Tokens.firstKey.get()
        try directory.publish([(key, "key-1")])

        let token = try Tokens.sign(Tokens.claims(issuer: issuer), with: key, kid: "key-1")
        let claims = try await google(directory).verify(provider: .google, idToken: token, rawNonce: nil)
        #expect(claims.issuer == "https://accounts.google.com")
        #expect(claims.subject == "provider-user-1")
        #expect(claims.email == "ada@example.com")
        #expect(claims.emailVerified == true)
    }

    @Test("a token that fails a check is refused as UNAUTHENTICATED INVALID_CREDENTIAL", arguments: Defect.allCases)
    func refused(defect: Defect) async throws {
        let directory = try KeySetDirectory()
        defer { directory.remove() }
        let key = try Tokens.firstKey.get()
        try directory.publish([(key, "key-1")])

        let token: String
        switch defect {
        case .wrongAudience:
            token = try Tokens.sign(Tokens.claims(audience: "someone-elses-app"), with: key, kid: "key-1")
        case .wrongIssuer:
            token = try Tokens.sign(Tokens.claims(issuer: "https://appleid.apple.com"), with: key, kid: "key-1")
        case .expired:
            token = try Tokens.sign(Tokens.claims(expiresAt: Date() - 3600), with: key, kid: "key-1")
        case .unpublishedKey:
            token = try Tokens.sign(Tokens.claims(), with: try Tokens.strangerKey.get(), kid: "key-1")
        case .unknownKeyID:
            token = try Tokens.sign(Tokens.claims(), with: try Tokens.strangerKey.get(), kid: "key-9")
        }
        let error = try await #require(throws: RPCError.self) {
            try await google(directory).verify(provider: .google, idToken: token, rawNonce: nil)
        }
        #expect(error.code == .unauthenticated)
        #expect(error.reason == AuthReason.invalidCredential.rawValue)
    }

    @Test(
        "a provider that is not configured is refused as UNSUPPORTED_PROVIDER",
        arguments: [IdentityProvider.apple, .kakao, .naver])
    func unconfigured(provider: IdentityProvider) async throws {
        let providers = IdentityProviders([.google(clientIDs: [Tokens.googleClientID], jwks: "/nonexistent/jwks.json")])
        #expect(providers.configured == [.google])
        let error = try await #require(throws: RPCError.self) {
            try await providers.verify(provider: provider, idToken: "a.b.c", rawNonce: nil)
        }
        #expect(error.reason == AuthReason.unsupportedProvider.rawValue)
        #expect(error.code == AuthReason.unsupportedProvider.code)
    }

    @Test("keys that cannot be had make verification UNAVAILABLE, not a refusal of the token")
    func keysUnavailable() async throws {
        let providers = IdentityProviders([.google(clientIDs: [Tokens.googleClientID], jwks: "/nonexistent/jwks.json")])
        let token = try Tokens.sign(Tokens.claims(), with: try Tokens.firstKey.get(), kid: "key-1")
        let error = try await #require(throws: RPCError.self) {
            try await providers.verify(provider: .google, idToken: token, rawNonce: nil)
        }
        #expect(error.code == .unavailable)
    }

    @Test(
        "Apple's nonce: a nonce in the token must match the raw nonce, and nonce_supported requires one",
        arguments: [
            ("r1", "r1", nil, true),
            ("r1", "r2", nil, false),
            ("r1", nil, nil, false),
            (nil, "r1", nil, false),
            (nil, nil, nil, true),
            (nil, nil, true, false),
        ] as [(String?, String?, Bool?, Bool)])
    func appleNonce(tokenNonce: String?, rawNonce: String?, nonceSupported: Bool?, accepted: Bool) async throws {
        let directory = try KeySetDirectory()
        defer { directory.remove() }
        let key = try Tokens.firstKey.get()
        try directory.publish([(key, "apple-1")])
        let providers = IdentityProviders([.apple(clientIDs: [Tokens.appleClientID], jwks: directory.file)])

        let claims = Tokens.claims(
            issuer: "https://appleid.apple.com", audience: Tokens.appleClientID,
            nonce: tokenNonce.map { AppleNonce.hash(rawNonce: $0) }, nonceSupported: nonceSupported)
        let token = try Tokens.sign(claims, with: key, kid: "apple-1")
        if accepted {
            let verified = try await providers.verify(provider: .apple, idToken: token, rawNonce: rawNonce)
            #expect(verified.subject == "provider-user-1")
        } else {
            let error = try await #require(throws: RPCError.self) {
                try await providers.verify(provider: .apple, idToken: token, rawNonce: rawNonce)
            }
            #expect(error.reason == AuthReason.invalidCredential.rawValue)
        }
    }

    @Test("a key rotated into the file under a new kid is picked up without a restart")
    func rotatedKey() async throws {
        let directory = try KeySetDirectory()
        defer { directory.remove() }
        let first = try Tokens.firstKey.get()
        let second = try Tokens.secondKey.get()
        try directory.publish([(first, "key-1")])
        let providers = google(directory)
        let old = try Tokens.sign(Tokens.claims(), with: first, kid: "key-1")
        #expect(try await providers.verify(provider: .google, idToken: old, rawNonce: nil).subject == "provider-user-1")

        try directory.publish([(first, "key-1"), (second, "key-2")])
        let new = try Tokens.sign(Tokens.claims(), with: second, kid: "key-2")
        #expect(try await providers.verify(provider: .google, idToken: new, rawNonce: nil).subject == "provider-user-1")
        #expect(try await providers.verify(provider: .google, idToken: old, rawNonce: nil).subject == "provider-user-1")
    }

    @Test("a JWK Set at an http URL is fetched and used")
    func keysFromURL() async throws {
        let directory = try KeySetDirectory()
        defer { directory.remove() }
        let key = try Tokens.firstKey.get()
        try directory.publish([(key, "key-1")])
        let server = try await StaticFileServer.start(serving: directory.path)
        defer { server.stop() }

        let providers = IdentityProviders([
            .google(clientIDs: [Tokens.googleClientID], jwks: server.url(of: "jwks.json"))
        ])
        let token = try Tokens.sign(Tokens.claims(), with: key, kid: "key-1")
        let claims = try await providers.verify(provider: .google, idToken: token, rawNonce: nil)
        #expect(claims.subject == "provider-user-1")

        let forged = try Tokens.sign(Tokens.claims(), with: try Tokens.strangerKey.get(), kid: "key-1")
        let error = try await #require(throws: RPCError.self) {
            try await providers.verify(provider: .google, idToken: forged, rawNonce: nil)
        }
        #expect(error.reason == AuthReason.invalidCredential.rawValue)
    }
}
