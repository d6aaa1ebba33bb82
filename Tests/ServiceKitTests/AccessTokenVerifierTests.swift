import Contracts
import Credentials
import Foundation
import RPC
@testable import ServiceKit
import Testing

/// `AccessTokenVerifier`: header parsing, the API.md §3 reasons, and key fetching.
@Suite("Access token verification")
struct AccessTokenVerifierTests {
    @Test("a valid token yields its user")
    func validToken() async throws {
        let key = try AuthFixture.makeKey()
        let source = FakeKeySource(publishing: [key])
        let token = try AuthFixture.token(signedWith: key)
        let user = try await source.makeVerifier().authenticate(authorization: "Bearer \(token)")
        #expect(user == AuthenticatedUser(id: "user-1", sessionID: "session-1", email: "ada@example.com", emailVerified: true))
        #expect(source.fetches == 1)
    }

    @Test("a missing, blank or non-Bearer header is MISSING_TOKEN", arguments: [nil, "", "Basic x", "Bearer ", "Bearer"])
    func missingToken(header: String?) async throws {
        let source = FakeKeySource(publishing: [try AuthFixture.makeKey()])
        let verifier = source.makeVerifier()
        let answer = await rpcReason { _ = try await verifier.authenticate(authorization: header) }
        #expect(answer?.code == .unauthenticated)
        #expect(answer?.reason == AuthReason.missingToken.rawValue)
        #expect(source.fetches == 0)
    }

    @Test("an expired token is ACCESS_TOKEN_EXPIRED")
    func expiredToken() async throws {
        let key = try AuthFixture.makeKey()
        let token = try AuthFixture.token(signedWith: key, issuedAt: Date().addingTimeInterval(-3600))
        let verifier = FakeKeySource(publishing: [key]).makeVerifier()
        let answer = await rpcReason { _ = try await verifier.authenticate(authorization: "Bearer \(token)") }
        #expect(answer?.code == .unauthenticated)
        #expect(answer?.reason == AuthReason.accessTokenExpired.rawValue)
    }

    @Test("a wrong issuer, audience, signature or alg none is INVALID_ACCESS_TOKEN", arguments: BadToken.allCases)
    func invalidToken(kind: BadToken) async throws {
        let key = try AuthFixture.makeKey()
        let token = try kind.token(for: key)
        let verifier = FakeKeySource(publishing: [key]).makeVerifier()
        let answer = await rpcReason { _ = try await verifier.authenticate(authorization: "Bearer \(token)") }
        #expect(answer?.code == .unauthenticated)
        #expect(answer?.reason == AuthReason.invalidAccessToken.rawValue)
    }

    @Test("an unknown kid refetches once and then verifies with the rotated key")
    func rotatedKey() async throws {
        let old = try AuthFixture.makeKey()
        let source = FakeKeySource(publishing: [old])
        let verifier = source.makeVerifier()
        _ = try await verifier.authenticate(authorization: "Bearer \(try AuthFixture.token(signedWith: old))")
        #expect(source.fetches == 1)

        let rotated = try AuthFixture.makeKey()
        source.publish([old, rotated])
        let user = try await verifier.authenticate(authorization: "Bearer \(try AuthFixture.token(signedWith: rotated))")
        #expect(user.id == "user-1")
        #expect(source.fetches == 2)

        // A second unknown kid within the interval is refused without asking the source.
        let stranger = try AuthFixture.makeKey()
        let answer = await rpcReason {
            _ = try await verifier.authenticate(authorization: "Bearer \(try AuthFixture.token(signedWith: stranger))")
        }
        #expect(answer?.reason == AuthReason.invalidAccessToken.rawValue)
        #expect(source.fetches == 2)
    }

    @Test("keys past their age are fetched again: a key the issuer removed stops being accepted")
    func removedKeyExpires() async throws {
        let old = try AuthFixture.makeKey(), current = try AuthFixture.makeKey()
        let source = FakeKeySource(publishing: [old, current])
        // 2 s: the two verifications while the keys are young must come within it even on a
        // busy machine (at 300 ms a parallel run once saw them stale already).
        let verifier = source.makeVerifier(keyMaxAge: .seconds(2))
        let oldToken = try AuthFixture.token(signedWith: old)
        #expect(try await verifier.authenticate(token: oldToken).id == "user-1")
        source.publish([current])  // `old` withdrawn (compromised, say)
        #expect(try await verifier.authenticate(token: oldToken).id == "user-1")  // cached, still young
        #expect(source.fetches == 1)

        try await Task.sleep(for: .milliseconds(2100))
        let answer = await rpcReason { _ = try await verifier.authenticate(token: oldToken) }
        #expect(answer?.reason == AuthReason.invalidAccessToken.rawValue)
        #expect(try await verifier.authenticate(token: try AuthFixture.token(signedWith: current)).id == "user-1")
        #expect(source.fetches == 2)
    }

    @Test("keys past their age stay in use while the source is down, and are fetched at most once per interval")
    func staleKeysWhileSourceDown() async throws {
        let key = try AuthFixture.makeKey()
        let source = FakeKeySource(publishing: [key])
        let verifier = source.makeVerifier(refetchInterval: .seconds(30), keyMaxAge: .milliseconds(100))
        let token = try AuthFixture.token(signedWith: key)
        _ = try await verifier.authenticate(token: token)
        source.setFailing(true)
        try await Task.sleep(for: .milliseconds(200))
        for _ in 0..<5 { #expect(try await verifier.authenticate(token: token).id == "user-1") }
        #expect(source.fetches == 2)  // one failed refetch; the others wait out the interval
    }

    @Test("a source failure with no cached keys is UNAVAILABLE, and the next call tries again")
    func sourceFailure() async throws {
        let key = try AuthFixture.makeKey()
        let source = FakeKeySource(publishing: [key])
        source.setFailing(true)
        let verifier = source.makeVerifier()
        let token = try AuthFixture.token(signedWith: key)
        let answer = await rpcReason { _ = try await verifier.authenticate(authorization: "Bearer \(token)") }
        #expect(answer?.code == .unavailable)
        #expect(answer?.reason == "UPSTREAM_UNAVAILABLE")

        source.setFailing(false)
        #expect(try await verifier.authenticate(token: token).id == "user-1")
        #expect(source.fetches == 2)
    }

    @Test("concurrent first calls share one fetch")
    func concurrentFirstFetch() async throws {
        let key = try AuthFixture.makeKey()
        let source = FakeKeySource(publishing: [key])
        let verifier = source.makeVerifier()
        let token = try AuthFixture.token(signedWith: key)
        try await withThrowingTaskGroup(of: AuthenticatedUser.self) { group in
            for _ in 0..<50 {
                group.addTask { try await verifier.authenticate(token: token) }
            }
            for try await user in group { #expect(user.id == "user-1") }
        }
        #expect(source.fetches == 1)
    }

    @Test("GetJwks keys convert member for member")
    func contractKeyConversion() throws {
        let published = try AuthFixture.makeKey().publicJWK
        let contract = Contracts.JWK(
            kty: published.kty, kid: published.kid ?? "", use: published.use, alg: published.alg,
            crv: published.crv, x: published.x)
        #expect(Credentials.JWK(contract: contract) == published)
    }
}

/// Tokens that verify against nothing the fixture's verifier accepts.
enum BadToken: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case wrongIssuer, wrongAudience, wrongSignature, algorithmNone, garbage

    var testDescription: String { rawValue }

    /// The token, for a verifier that trusts `key`.
    func token(for key: SigningKey) throws -> String {
        switch self {
        case .wrongIssuer:
            return try AuthFixture.token(signedWith: key, issuer: "https://evil.test")
        case .wrongAudience:
            return try AuthFixture.token(signedWith: key, audience: "someone-else")
        case .wrongSignature:
            // Another private key under the trusted kid.
            return try AuthFixture.token(signedWith: try AuthFixture.makeKey(kid: key.kid))
        case .algorithmNone:
            let parts = try AuthFixture.token(signedWith: key).split(separator: ".")
            let header = Base64URL.encode(Array(#"{"alg":"none","kid":"\#(key.kid)","typ":"JWT"}"#.utf8))
            return "\(header).\(parts[1])."
        case .garbage:
            return "not.a.jwt"
        }
    }
}
