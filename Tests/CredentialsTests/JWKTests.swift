import Credentials
import Crypto
import CryptoExtras
import Foundation
import Testing

@Suite("JWKs and JWK Sets")
struct JWKTests {
    /// The JSON object `jwk` encodes to.
    private func object(_ jwk: JWK) throws -> [String: String] {
        let data = try JSONEncoder().encode(jwk)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: String])
    }

    @Test("an Ed25519 key is published as OKP with crv and x")
    func okpShape() throws {
        let key = try SigningKey.generate(algorithm: .edDSA)
        let json = try object(key.publicJWK)
        #expect(Set(json.keys) == ["kty", "crv", "x", "use", "alg", "kid"])
        #expect(json["kty"] == "OKP")
        #expect(json["crv"] == "Ed25519")
        #expect(json["alg"] == "EdDSA")
        #expect(json["use"] == "sig")
        #expect(json["kid"] == key.kid)
        #expect(try #require(json["x"].flatMap { Base64URL.decode($0) }).count == 32)
    }

    @Test("a P-256 key is published as EC with crv, x and y")
    func ecShape() throws {
        let key = try SigningKey.generate(algorithm: .es256)
        let json = try object(key.publicJWK)
        #expect(Set(json.keys) == ["kty", "crv", "x", "y", "use", "alg", "kid"])
        #expect(json["kty"] == "EC")
        #expect(json["crv"] == "P-256")
        #expect(json["alg"] == "ES256")
        #expect(try #require(json["x"].flatMap { Base64URL.decode($0) }).count == 32)
        #expect(try #require(json["y"].flatMap { Base64URL.decode($0) }).count == 32)
    }

    @Test("an RSA key is published with n and e")
    func rsaShape() throws {
        let rsa = try TokenFixtures.providerRSA.get()
        let json = try object(try JWK(rsa: rsa.publicKey, kid: "r1"))
        #expect(Set(json.keys) == ["kty", "n", "e", "use", "alg", "kid"])
        #expect(json["kty"] == "RSA")
        #expect(json["alg"] == "RS256")
        #expect(json["e"] == "AQAB")
        #expect(try #require(json["n"].flatMap { Base64URL.decode($0) }).count == 256)
    }

    @Test("a key set round-trips through JSON and ignores members it does not model")
    func setJSON() throws {
        let keys = JWKSet(keys: [try SigningKey.generate().publicJWK, try SigningKey.generate(algorithm: .es256).publicJWK])
        let data = try keys.jsonData()
        #expect(String(decoding: data, as: UTF8.self).hasPrefix(#"{"keys":[{"alg":"EdDSA","#))
        #expect(try JWKSet(jsonData: data) == keys)

        let provider = #"{"keys":[{"kty":"RSA","kid":"k","use":"sig","alg":"RS256","n":"AQAB","e":"AQAB","x5c":["MII"],"x5t":"abc"}]}"#
        let decoded = try JWKSet(jsonData: Data(provider.utf8))
        #expect(decoded.key(withID: "k")?.n == "AQAB")
        #expect(decoded.key(withID: "missing") == nil)
        #expect(throws: (any Error).self) { try JWKSet(jsonData: Data(#"{"keys":{}}"#.utf8)) }
    }

    @Test("thumbprints match the examples of RFC 7638 §3.1 and RFC 8037 appendix A.3")
    func thumbprintVectors() {
        let n =
            "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"
        let rsa = JWK(kty: "RSA", alg: "RS256", kid: "2011-04-29", n: n, e: "AQAB")
        #expect(rsa.thumbprint == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs")
        let okp = JWK(kty: "OKP", crv: "Ed25519", x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo")
        #expect(okp.thumbprint == "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k")
        #expect(JWK(kty: "oct").thumbprint == nil)
    }

    @Test("a generated key's kid is the start of its thumbprint")
    func kidFromThumbprint() throws {
        for algorithm in [JWSAlgorithm.edDSA, .es256] {
            let key = try SigningKey.generate(algorithm: algorithm)
            #expect(key.kid.count == 16)
            #expect(try #require(key.publicJWK.thumbprint).hasPrefix(key.kid))
        }
    }

    @Test("keys unfit for signatures are left out of a verifier")
    func unusableKeys() throws {
        let good = try SigningKey.generate()
        var encryption = try SigningKey.generate().publicJWK
        encryption.use = "enc"
        var misnamed = try SigningKey.generate().publicJWK
        misnamed.alg = "ES256"
        var offCurve = try SigningKey.generate(algorithm: .es256).publicJWK
        offCurve.y = Base64URL.encode([UInt8](repeating: 7, count: 32))
        let noKid = JWK(kty: "OKP", crv: "Ed25519", x: good.publicJWK.x)
        let keys = JWKSet(keys: [good.publicJWK, encryption, misnamed, offCurve, noKid, JWK(kty: "oct", kid: "h")])
        let verifier = JWTVerifier.accessTokens(keys: keys, issuer: "i", audience: "a")
        #expect(verifier.keyIDs == [good.kid])
    }
}
