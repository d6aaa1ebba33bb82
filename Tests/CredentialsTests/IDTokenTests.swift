import Credentials
import Crypto
import CryptoExtras
import Foundation
import Testing

@Suite("Provider ID tokens: RS256 and Apple's nonce")
struct IDTokenTests {
    typealias F = TokenFixtures

    /// An RS256 token for `payload` signed by `key` under `kid`.
    private func mint(_ payload: String, key: _RSA.Signing.PrivateKey, kid: String = "apple-1") throws -> String {
        try F.compact(header: #"{"alg":"RS256","kid":"\#(kid)"}"#, payload: payload, sign: F.rs256(key))
    }

    @Test("an RS256 ID token verifies against a JWK built from the key's n and e")
    func roundTrip() throws {
        let rsa = try F.providerRSA.get()
        let verifier = F.appleVerifier([try F.rsaJWK(rsa, kid: "apple-1")])
        let claims = F.appleClaims(nonce: AppleNonce.hash(rawNonce: "raw"), nonceSupported: true)
        let verified = try verifier.verifyIDToken(try mint(F.json(claims), key: rsa), now: F.now)
        #expect(verified == claims)
        #expect(verified.subject == "001234.abcdef")
    }

    @Test("an RS256 token signed by another RSA key under the same kid is refused")
    func otherKey() throws {
        let verifier = F.appleVerifier([try F.rsaJWK(try F.providerRSA.get(), kid: "apple-1")])
        let forged = try mint(F.json(F.appleClaims()), key: try F.otherRSA.get())
        #expect(throws: TokenError.badSignature) { try verifier.verifyIDToken(forged, now: F.now) }
    }

    @Test("a PSS signature is not accepted as RS256")
    func pssPadding() throws {
        let rsa = try F.providerRSA.get()
        let verifier = F.appleVerifier([try F.rsaJWK(rsa, kid: "apple-1")])
        let token = try F.compact(header: #"{"alg":"RS256","kid":"apple-1"}"#, payload: F.json(F.appleClaims())) {
            try rsa.signature(for: SHA256.hash(data: $0), padding: .PSS).rawRepresentation
        }
        #expect(throws: TokenError.badSignature) { try verifier.verifyIDToken(token, now: F.now) }
    }

    @Test("only RS256 is accepted on ID tokens: not EdDSA, not HS256 keyed with the RSA public key")
    func onlyRS256() throws {
        let rsa = try F.providerRSA.get()
        let edKey = try SigningKey.generate()
        let verifier = F.appleVerifier([try F.rsaJWK(rsa, kid: "apple-1"), edKey.publicJWK])
        let edToken = try JWTSigner(key: edKey).sign(F.appleClaims())
        #expect(throws: TokenError.unsupportedAlgorithm) { try verifier.verifyIDToken(edToken, now: F.now) }

        let payload = try F.json(F.appleClaims())
        let header = #"{"alg":"HS256","kid":"apple-1"}"#
        for secret in [rsa.publicKey.derRepresentation, Data(rsa.publicKey.pemRepresentation.utf8)] {
            let forged = F.compact(header: header, payload: payload, sign: F.hs256(secret: secret))
            #expect(throws: TokenError.unsupportedAlgorithm) { try verifier.verifyIDToken(forged, now: F.now) }
        }
    }

    @Test("issuer and audience come from configuration; Google's two issuer spellings both pass")
    func issuerAndAudience() throws {
        let rsa = try F.providerRSA.get()
        let google = JWTVerifier.idTokens(
            keys: JWKSet(keys: [try F.rsaJWK(rsa, kid: "g-1")]),
            issuers: ["https://accounts.google.com", "accounts.google.com"], audiences: ["web-client", "ios-client"])
        var claims = F.appleClaims()
        claims.audience = ["ios-client"]
        for issuer in ["https://accounts.google.com", "accounts.google.com"] {
            claims.issuer = issuer
            let token = try mint(F.json(claims), key: rsa, kid: "g-1")
            #expect(try google.verifyIDToken(token, now: F.now).issuer == issuer)
        }
        claims.issuer = F.appleIssuer
        let apple = try mint(F.json(claims), key: rsa, kid: "g-1")
        #expect(throws: TokenError.wrongIssuer) { try google.verifyIDToken(apple, now: F.now) }
        claims.issuer = "accounts.google.com"
        claims.audience = ["someone-else"]
        let elsewhere = try mint(F.json(claims), key: rsa, kid: "g-1")
        #expect(throws: TokenError.wrongAudience) { try google.verifyIDToken(elsewhere, now: F.now) }
    }

    @Test("Apple's string booleans decode as booleans; other strings make the token malformed")
    func stringBooleans() throws {
        let rsa = try F.providerRSA.get()
        let verifier = F.appleVerifier([try F.rsaJWK(rsa, kid: "apple-1")])
        let base = #""iss":"\#(F.appleIssuer)","sub":"s","aud":"\#(F.appleClientID)","exp":1750000600,"iat":1750000000"#
        let stringly = try mint(#"{\#(base),"email_verified":"true","nonce_supported":"false"}"#, key: rsa)
        let claims = try verifier.verifyIDToken(stringly, now: F.now)
        #expect(claims.emailVerified == true)
        #expect(claims.nonceSupported == false)
        #expect(claims.audience == [F.appleClientID])
        let native = try mint(#"{\#(base),"email_verified":false}"#, key: rsa)
        #expect(try verifier.verifyIDToken(native, now: F.now).emailVerified == false)
        let nonsense = try mint(#"{\#(base),"email_verified":"yes"}"#, key: rsa)
        #expect(throws: TokenError.malformed) { try verifier.verifyIDToken(nonsense, now: F.now) }
    }

    @Test("an RSA JWK shorter than 2048 bits is not usable")
    func shortRSAKey() throws {
        let weak = try _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: 1024))
        let verifier = F.appleVerifier([try F.rsaJWK(weak, kid: "weak")])
        #expect(verifier.keyIDs.isEmpty)
        let token = try mint(F.json(F.appleClaims()), key: weak, kid: "weak")
        #expect(throws: TokenError.unknownKey(kid: "weak")) { try verifier.verifyIDToken(token, now: F.now) }
    }

    @Test("Apple's nonce is the hex SHA-256 of the raw nonce")
    func nonceMatch() {
        // SHA-256("abc"), FIPS 180-2 appendix B.1.
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        #expect(AppleNonce.hash(rawNonce: "abc") == abc)
        #expect(AppleNonce.matches(rawNonce: "abc", claim: abc))
        #expect(AppleNonce.matches(rawNonce: "abc", claim: abc.uppercased()))
        #expect(!AppleNonce.matches(rawNonce: "abd", claim: abc))
        #expect(!AppleNonce.matches(rawNonce: "abc", claim: "abc"))
        #expect(!AppleNonce.matches(rawNonce: "abc", claim: ""))
    }

    @Test(
        "the nonce rule: a nonce must match, and nonce_supported makes one mandatory",
        arguments: [
            (AppleNonce.hash(rawNonce: "r1"), "r1", nil, true),
            (AppleNonce.hash(rawNonce: "r1"), "r2", nil, false),
            (AppleNonce.hash(rawNonce: "r1"), nil, nil, false),
            (nil, "r1", nil, false),
            (nil, nil, nil, true),
            (nil, nil, false, true),
            (nil, nil, true, false),
        ] as [(String?, String?, Bool?, Bool)])
    func nonceRule(claim: String?, rawNonce: String?, supported: Bool?, satisfied: Bool) {
        let claims = F.appleClaims(nonce: claim, nonceSupported: supported)
        #expect(AppleNonce.isSatisfied(by: claims, rawNonce: rawNonce) == satisfied)
    }
}
