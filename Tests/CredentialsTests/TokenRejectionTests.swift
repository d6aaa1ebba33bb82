import Credentials
import Crypto
import Foundation
import Testing

@Suite("Access tokens: every way a token is refused")
struct TokenRejectionTests {
    typealias F = TokenFixtures

    /// The Ed25519 key behind `key`, for signing payloads `JWTSigner` would never produce.
    let rawKey = Curve25519.Signing.PrivateKey()
    /// The signing key under test, published to `verifier`.
    let key: SigningKey
    /// An access-token verifier that knows only `key`.
    let verifier: JWTVerifier
    /// A valid access token signed by `key`, the starting point for tampering.
    let token: String

    init() throws {
        key = try SigningKey(algorithm: .edDSA, privateKey: rawKey.rawRepresentation)
        verifier = F.accessVerifier([key])
        token = try JWTSigner(key: key).sign(F.accessClaims())
    }

    /// The standard access claims as a mutable JSON object.
    private func claimsObject() throws -> [String: Any] {
        let data = Data(try F.json(F.accessClaims()).utf8)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// A correctly signed EdDSA token with `payload` as its claims.
    private func signRaw(_ payload: [String: Any]) throws -> String {
        let json = String(decoding: try JSONSerialization.data(withJSONObject: payload), as: UTF8.self)
        return try F.compact(header: #"{"alg":"EdDSA","kid":"\#(key.kid)","typ":"JWT"}"#, payload: json) {
            try rawKey.signature(for: $0)
        }
    }

    private func error(_ token: String, now: Date = F.now) -> TokenError? {
        F.tokenError { () throws(TokenError) in try verifier.verifyAccessToken(token, now: now) }
    }

    private func segments(_ token: String) -> [String] {
        token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    @Test("an unsigned token with alg none is refused")
    func algNone() throws {
        let payload = try F.json(F.accessClaims())
        for header in [#"{"alg":"none","typ":"JWT"}"#, #"{"alg":"none","kid":"\#(key.kid)"}"#] {
            let unsigned = F.compact(header: header, payload: payload) { _ in Data() }
            #expect(unsigned.hasSuffix("."))
            #expect(error(unsigned) == .unsupportedAlgorithm)
        }
    }

    @Test("an HS256 token keyed with the public key's bytes is refused")
    func hmacWithPublicKey() throws {
        let jwk = key.publicJWK
        let header = #"{"alg":"HS256","kid":"\#(key.kid)","typ":"JWT"}"#
        let payload = try F.json(F.accessClaims())
        let rawKey = try #require(jwk.x.flatMap { Base64URL.decode($0) })
        for secret in [rawKey, Data(try #require(jwk.x).utf8), Data(try F.json(jwk).utf8)] {
            let forged = F.compact(header: header, payload: payload, sign: F.hs256(secret: secret))
            #expect(error(forged) == .unsupportedAlgorithm)
        }
    }

    @Test("a token naming another algorithm than its key's is refused")
    func algorithmKeyMismatch() throws {
        let ecKey = try SigningKey.generate(algorithm: .es256)
        let verifier = F.accessVerifier([key, ecKey])
        // Signed by the Ed25519 key, but the header claims ES256 and the EC key's kid, and the
        // other way round.
        let payload = try F.json(F.accessClaims())
        let claimsES256 = #"{"alg":"ES256","kid":"\#(key.kid)","typ":"JWT"}"#
        let claimsEdDSA = #"{"alg":"EdDSA","kid":"\#(ecKey.kid)","typ":"JWT"}"#
        for header in [claimsES256, claimsEdDSA] {
            let forged = F.compact(header: header, payload: payload) { _ in Data(repeating: 1, count: 64) }
            #expect(throws: TokenError.unsupportedAlgorithm) { try verifier.verifyAccessToken(forged, now: F.now) }
        }
    }

    @Test("an RS256 token is refused by the access-token verifier even with a matching RSA key")
    func rs256NotForAccessTokens() throws {
        let rsa = try F.providerRSA.get()
        let verifier = JWTVerifier.accessTokens(
            keys: JWKSet(keys: [try F.rsaJWK(rsa, kid: "rsa-1")]), issuer: F.issuer, audience: F.audience)
        let rs256 = try F.compact(
            header: #"{"alg":"RS256","kid":"rsa-1"}"#, payload: F.json(F.accessClaims()), sign: F.rs256(rsa))
        #expect(throws: TokenError.unsupportedAlgorithm) { try verifier.verifyAccessToken(rs256, now: F.now) }
    }

    @Test("a token from a key that is not in the set names the unknown kid")
    func unknownKey() throws {
        let stranger = try SigningKey.generate()
        let foreign = try JWTSigner(key: stranger).sign(F.accessClaims())
        #expect(error(foreign) == .unknownKey(kid: stranger.kid))
        #expect(error(foreign)?.suggestsKeyRefetch == true)
        #expect(error(token, now: F.now + 3600)?.suggestsKeyRefetch == false)
    }

    @Test("claims that do not fit are refused with their own errors")
    func claimChecks() throws {
        let signer = JWTSigner(key: key)
        var wrongIssuer = F.accessClaims()
        wrongIssuer.issuer = "https://evil.example"
        var wrongAudience = F.accessClaims()
        wrongAudience.audience = "another-app"
        #expect(error(try signer.sign(wrongIssuer)) == .wrongIssuer)
        #expect(error(try signer.sign(wrongAudience)) == .wrongAudience)
        #expect(error(token, now: F.now + 3600) == .expired)
        #expect(error(token, now: F.now - 3600) == .notYetValid)
    }

    @Test("a token whose nbf lies ahead is not yet valid; within the leeway it is")
    func notBefore() throws {
        var payload = try claimsObject()
        payload["nbf"] = 1_750_000_300
        #expect(error(try signRaw(payload)) == .notYetValid)
        payload["nbf"] = 1_750_000_030
        #expect(error(try signRaw(payload)) == nil)
    }

    @Test("an audience array containing ours is accepted; one without it is not")
    func audienceArray() throws {
        var payload = try claimsObject()
        payload["aud"] = ["other", F.audience]
        let withUs = try signRaw(payload)
        #expect(throws: Never.self) { try verifier.verify(withUs, as: IgnoredClaims.self, now: F.now) }
        payload["aud"] = ["other", "third"]
        #expect(error(try signRaw(payload)) == .wrongAudience)
        payload["aud"] = nil
        #expect(error(try signRaw(payload)) == .wrongAudience)
    }

    @Test("a missing or non-numeric exp makes the token malformed")
    func badExpiry() throws {
        var payload = try claimsObject()
        payload["exp"] = nil
        #expect(error(try signRaw(payload)) == .malformed)
        payload["exp"] = "tomorrow"
        #expect(error(try signRaw(payload)) == .malformed)
        payload["exp"] = -5
        #expect(error(try signRaw(payload)) == .malformed)
    }

    @Test("a token of another type, or of none, is refused as an access token")
    func wrongType() throws {
        let signer = JWTSigner(key: key)
        #expect(error(try signer.sign(F.accessClaims(type: "refresh"))) == .wrongType)
        #expect(error(try signer.sign(F.accessClaims(type: "id"))) == .wrongType)
        #expect(error(try signer.sign(F.accessClaims(type: nil))) == .wrongType)
    }

    @Test("a tampered payload or signature breaks the signature")
    func tampering() throws {
        let parts = segments(token)
        var other = F.accessClaims()
        other.subject = "admin"
        let swappedPayload = [parts[0], segments(try JWTSigner(key: key).sign(other))[1], parts[2]]
        #expect(error(swappedPayload.joined(separator: ".")) == .badSignature)

        var signature = try #require(Base64URL.decode(parts[2]))
        signature[0] ^= 0x01
        #expect(error([parts[0], parts[1], Base64URL.encode(signature)].joined(separator: ".")) == .badSignature)
        let shortened = Base64URL.encode(signature.prefix(32))
        #expect(error([parts[0], parts[1], shortened].joined(separator: ".")) == .badSignature)
    }

    @Test(
        "tokens that are not three segments of base64url JSON are malformed",
        arguments: [
            "", ".", "..", "a.b", "a.b.c.d", "!!!.###.$$$", "eyJhbGciOiJFZERTQSJ9", "e30.e30.", "e30=.e30.AA",
        ])
    func malformedShapes(token: String) {
        #expect(error(token) == .malformed)
    }

    @Test("a truncated token is malformed")
    func truncated() {
        let parts = segments(token)
        #expect(error(parts[0] + "." + parts[1]) == .malformed)
        #expect(error(parts[0] + "." + parts[1] + ".") == .badSignature)
        #expect(error(String(token.dropLast(1))) != nil)
        #expect(error(parts[0] + ".") == .malformed)
    }

    @Test("a header without kid, with crit, or with non-JSON content is malformed")
    func malformedHeaders() throws {
        let payload = try F.json(F.accessClaims())
        let signature: (Data) -> Data = { _ in Data(repeating: 0, count: 64) }
        for header in [#"{"alg":"EdDSA"}"#, #"{"alg":"EdDSA","kid":"\#(key.kid)","crit":["b64"]}"#, "not json", "[]"] {
            #expect(error(F.compact(header: header, payload: payload, sign: signature)) == .malformed)
        }
    }

    @Test("a validly signed payload that is not a claims object is malformed")
    func malformedPayload() throws {
        let signer = JWTSigner(key: key)
        #expect(error(try signer.sign(["not", "an", "object"])) == .malformed)
        #expect(error(try signer.sign(["iss": F.issuer])) == .malformed)
    }

    @Test("an oversized token is refused before any work")
    func oversized() {
        let huge = String(repeating: "A", count: 20_000) + ".e30.AA"
        #expect(error(huge) == .malformed)
    }
}

/// Claims decoded as nothing: the registered claims are still checked.
private struct IgnoredClaims: Decodable {}
