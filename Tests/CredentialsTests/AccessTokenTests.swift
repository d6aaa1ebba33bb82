import Credentials
import Foundation
import Testing

@Suite("Access tokens: signing and verifying")
struct AccessTokenTests {
    typealias F = TokenFixtures

    @Test("a signed access token verifies and gives back its claims", arguments: [JWSAlgorithm.edDSA, .es256])
    func roundTrip(algorithm: JWSAlgorithm) throws {
        let key = try SigningKey.generate(algorithm: algorithm)
        let token = try JWTSigner(key: key).sign(F.accessClaims())
        let claims = try F.accessVerifier([key]).verifyAccessToken(token, now: F.now)
        #expect(claims == F.accessClaims())
        #expect(claims.subject == "user-1")
        #expect(claims.sessionID == "session-1")
        #expect(claims.emailVerified)
    }

    @Test("the header names the algorithm, the kid and typ JWT", arguments: [JWSAlgorithm.edDSA, .es256])
    func header(algorithm: JWSAlgorithm) throws {
        let key = try SigningKey.generate(algorithm: algorithm)
        let token = try JWTSigner(key: key).sign(F.accessClaims())
        let segment = try #require(token.split(separator: ".").first)
        let header = try #require(Base64URL.decode(segment))
        let object = try #require(try JSONSerialization.jsonObject(with: header) as? [String: String])
        #expect(object == ["alg": algorithm.rawValue, "typ": "JWT", "kid": key.kid])
    }

    @Test("the payload uses the JSON claim names of API.md with NumericDate seconds")
    func payloadNames() throws {
        let key = try SigningKey.generate()
        let token = try JWTSigner(key: key).sign(F.accessClaims())
        let segments = token.split(separator: ".")
        try #require(segments.count == 3)
        let payload = try #require(Base64URL.decode(segments[1]))
        let object = try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
        #expect(
            Set(object.keys) == ["iss", "sub", "aud", "exp", "iat", "sid", "email", "email_verified", "typ"])
        #expect(object["exp"] as? Int == 1_750_000_840)
        #expect(object["iat"] as? Int == 1_749_999_940)
        #expect(object["typ"] as? String == "access")
    }

    @Test("one verifier accepts tokens from each of several published keys")
    func keyRotation() throws {
        let old = try SigningKey.generate(algorithm: .es256)
        let new = try SigningKey.generate(algorithm: .edDSA)
        let verifier = F.accessVerifier([new, old])
        #expect(verifier.keyIDs == [old.kid, new.kid])
        for key in [old, new] {
            let token = try JWTSigner(key: key).sign(F.accessClaims())
            #expect(try verifier.verifyAccessToken(token, now: F.now).subject == "user-1")
        }
    }

    @Test("the leeway admits a token that expired less than 60 s ago, and no more")
    func leeway() throws {
        let key = try SigningKey.generate()
        let token = try JWTSigner(key: key).sign(F.accessClaims())
        let verifier = F.accessVerifier([key])
        let expiry = F.now + 840
        #expect(throws: Never.self) { try verifier.verifyAccessToken(token, now: expiry + 59) }
        #expect(throws: TokenError.expired) { try verifier.verifyAccessToken(token, now: expiry + 60) }
        let strict = JWTVerifier.accessTokens(
            keys: JWKSet(keys: [key.publicJWK]), issuer: F.issuer, audience: F.audience, leeway: 0)
        #expect(throws: TokenError.expired) { try strict.verifyAccessToken(token, now: expiry) }
    }

    @Test("the convenience initializer makes a 15-minute token in whole seconds")
    func lifetime() {
        let claims = AccessTokenClaims(
            issuer: F.issuer, subject: "u", audience: F.audience, sessionID: "s", email: "e@example.com",
            emailVerified: false, issuedAt: Date(timeIntervalSince1970: 1000.75))
        #expect(claims.issuedAt == Date(timeIntervalSince1970: 1000))
        #expect(claims.expiresAt == Date(timeIntervalSince1970: 1900))
        #expect(claims.type == "access")
    }

    @Test("a replaced key set drops the old keys")
    func replacingKeys() throws {
        let old = try SigningKey.generate()
        let new = try SigningKey.generate()
        let verifier = F.accessVerifier([old]).replacingKeys(with: JWKSet(keys: [new.publicJWK]))
        let token = try JWTSigner(key: old).sign(F.accessClaims())
        #expect(throws: TokenError.unknownKey(kid: old.kid)) { try verifier.verifyAccessToken(token, now: F.now) }
    }
}
