import Contracts
import Credentials
import Foundation
import ServiceTestSupport

/// A way an access token can be wrong, built from a real session; each must be refused with
/// `INVALID_ACCESS_TOKEN`.
///
/// The harness gives auth-svc a signing key the tests know, so the wrong-issuer and
/// wrong-audience tokens carry a *valid* signature: only the claim check can refuse them.
enum ForgedAccessToken: String, CaseIterable, Sendable, CustomStringConvertible {
    case garbage = "not a JWT"
    case threeSegmentsOfNothing = "three segments that decode to nothing"
    case unsigned = "alg none with the real payload"
    case hs256WithPublicKey = "HS256 keyed with the service's public key"
    case wrongIssuer = "a validly signed token from another issuer"
    case wrongAudience = "a validly signed token for another audience"
    case unknownKeyID = "a kid the service never published"
    case anotherKeyUnderServiceKeyID = "another key's signature under the service's kid"
    case tamperedPayload = "the real signature over a changed payload"
    case providerIDToken = "a Google ID token"

    var description: String { rawValue }

    /// The forged token, derived from `session` of `service`.
    func token(from session: Session, of service: AuthServiceUnderTest) throws -> String {
        let genuine = session.accessToken
        guard let claims = CompactToken.accessClaims(of: genuine), let payload = CompactToken.payload(of: genuine) else {
            throw ForgeryError.unreadableAccessToken
        }
        let key = service.signingKey
        switch self {
        case .garbage:
            return "garbage"
        case .threeSegmentsOfNothing:
            return "a.b.c"
        case .unsigned:
            return CompactToken.unsigned(payload, kid: key.kid)
        case .hs256WithPublicKey:
            let publicKey = try Base64URL.decode(key.publicJWK.x ?? "").orThrow(ForgeryError.noPublicKey)
            return CompactToken.hs256(payload, secret: publicKey, kid: key.kid)
        case .wrongIssuer:
            var changed = claims
            changed.issuer = "https://evil.example"
            return try JWTSigner(key: key).sign(changed)
        case .wrongAudience:
            var changed = claims
            changed.audience = "someone-else"
            return try JWTSigner(key: key).sign(changed)
        case .unknownKeyID:
            return try JWTSigner(key: SigningKey.generate()).sign(claims)
        case .anotherKeyUnderServiceKeyID:
            let seed = Data((0..<32).map { _ in UInt8.random(in: .min ... .max) })
            let impostor = try SigningKey(algorithm: key.algorithm, privateKey: seed, kid: key.kid)
            return try JWTSigner(key: impostor).sign(claims)
        case .tamperedPayload:
            var changed = claims
            changed.subject = "another-user"
            changed.email = "mallory@example.com"
            let segments = genuine.split(separator: ".")
            return segments[0] + "." + Base64URL.encode(try CompactToken.json(changed)) + "." + segments[2]
        case .providerIDToken:
            return try IDTokens.google()
        }
    }

    /// The claims of `session`'s access token, re-signed with the service's own key after
    /// `change`: a token the service must accept unless `change` made it invalid.
    static func resigned(
        _ session: Session, of service: AuthServiceUnderTest, _ change: (inout AccessTokenClaims) -> Void
    ) throws -> String {
        guard var claims = CompactToken.accessClaims(of: session.accessToken) else {
            throw ForgeryError.unreadableAccessToken
        }
        change(&claims)
        return try JWTSigner(key: service.signingKey).sign(claims)
    }
}

/// Why a forged token could not be made.
enum ForgeryError: Error {
    /// The genuine access token's payload is not access-token claims.
    case unreadableAccessToken
    /// The service's key has no public key member.
    case noPublicKey
}

extension Optional {
    /// The wrapped value, or `error` thrown.
    func orThrow(_ error: some Error) throws -> Wrapped {
        guard let self else { throw error }
        return self
    }
}
