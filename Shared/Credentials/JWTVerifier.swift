package import Foundation

/// Verifies compact JWTs against a JWK Set, for one use: auth-svc's access tokens, or one
/// provider's ID tokens.
///
/// The steps, in order, each with its own `TokenError`: the token splits into three canonical
/// base64url segments with a JSON header (`malformed`); the header's `alg` is in this
/// verifier's allow-list (`unsupportedAlgorithm` — `none` and HS256 never are); its `kid` names
/// a key in the set (`unknownKey`, the cue to refetch keys); that key is bound to exactly that
/// algorithm (`unsupportedAlgorithm`); the signature verifies (`badSignature`); then, and only
/// then, the payload is read: `typ` if one is expected (`wrongType`), `iss` (`wrongIssuer`),
/// `aud` (`wrongAudience`), `exp` (`expired`), `nbf` and `iat` (`notYetValid`), the time checks
/// allowing `leeway` seconds of clock skew; finally the claims decode as the caller's type.
///
/// Immutable value; `Sendable` and safe to share between tasks. To change keys, make a new one
/// with `replacingKeys(with:)`.
package struct JWTVerifier: Sendable {
    /// The default allowance for clock skew between issuer and verifier, in seconds.
    package static let defaultLeeway: TimeInterval = 60

    /// The accepted `iss` values.
    package let issuers: Set<String>
    /// The accepted audiences; a token's `aud` must contain at least one of them.
    package let audiences: Set<String>
    /// The algorithms a token may use; each key further restricts this to its own.
    package let algorithms: Set<JWSAlgorithm>
    /// The `typ` claim every token must carry, or nil to skip that check.
    package let expectedType: String?
    /// The tolerated clock skew for `exp`, `nbf` and `iat`, in seconds.
    package let leeway: TimeInterval
    /// The usable keys by `kid`; keys without `kid`, unusable keys and later duplicates dropped.
    private let keys: [String: VerificationKey]

    /// A verifier for tokens signed by one of `keys` with one of `algorithms`.
    package init(
        keys: JWKSet, issuers: Set<String>, audiences: Set<String>, algorithms: Set<JWSAlgorithm>,
        expectedType: String? = nil, leeway: TimeInterval = JWTVerifier.defaultLeeway
    ) {
        var usable: [String: VerificationKey] = [:]
        for jwk in keys.keys {
            guard let kid = jwk.kid, usable[kid] == nil, let key = VerificationKey(jwk) else { continue }
            usable[kid] = key
        }
        self.keys = usable
        self.issuers = issuers
        self.audiences = audiences
        self.algorithms = algorithms
        self.expectedType = expectedType
        self.leeway = leeway.isFinite ? max(leeway, 0) : Self.defaultLeeway
    }

    /// A verifier for auth-svc access tokens: EdDSA or ES256 as the key says, `typ` "access".
    package static func accessTokens(
        keys: JWKSet, issuer: String, audience: String, leeway: TimeInterval = JWTVerifier.defaultLeeway
    ) -> JWTVerifier {
        JWTVerifier(
            keys: keys, issuers: [issuer], audiences: [audience], algorithms: JWSAlgorithm.accessTokenAlgorithms,
            expectedType: AccessTokenClaims.accessType, leeway: leeway)
    }

    /// A verifier for one provider's ID tokens: RS256 only, `iss` one of `issuers` (Google uses
    /// two spellings), `aud` one of the configured client ids.
    package static func idTokens(
        keys: JWKSet, issuers: Set<String>, audiences: Set<String>, leeway: TimeInterval = JWTVerifier.defaultLeeway
    ) -> JWTVerifier {
        JWTVerifier(
            keys: keys, issuers: issuers, audiences: audiences, algorithms: JWSAlgorithm.idTokenAlgorithms,
            leeway: leeway)
    }

    /// The same verifier with `keys` in place of its key set, e.g. after a refetch.
    package func replacingKeys(with keys: JWKSet) -> JWTVerifier {
        JWTVerifier(
            keys: keys, issuers: issuers, audiences: audiences, algorithms: algorithms,
            expectedType: expectedType, leeway: leeway)
    }

    /// The `kid`s of the usable keys.
    package var keyIDs: Set<String> {
        Set(keys.keys)
    }

    /// The claims of `token` as `Claims`, after every check above passed at time `now`.
    package func verify<Claims: Decodable>(
        _ token: String, as claimsType: Claims.Type = Claims.self, now: Date = Date()
    ) throws(TokenError) -> Claims {
        let jws = try CompactJWS(parsing: token)
        guard let algorithm = JWSAlgorithm(rawValue: jws.header.alg), algorithms.contains(algorithm) else {
            throw .unsupportedAlgorithm
        }
        guard let kid = jws.header.kid else { throw .malformed }
        guard let key = keys[kid] else { throw .unknownKey(kid: kid) }
        guard key.algorithm == algorithm else { throw .unsupportedAlgorithm }
        guard key.isValidSignature(jws.signature, for: jws.signingInput, algorithm: algorithm) else {
            throw .badSignature
        }
        guard let registered = try? JSONDecoder().decode(RegisteredClaims.self, from: jws.payload) else {
            throw .malformed
        }
        try check(registered, now: now)
        guard let claims = try? JSONDecoder().decode(Claims.self, from: jws.payload) else {
            throw .malformed
        }
        return claims
    }

    /// The claims of an access token verified at `now`.
    package func verifyAccessToken(_ token: String, now: Date = Date()) throws(TokenError) -> AccessTokenClaims {
        try verify(token, as: AccessTokenClaims.self, now: now)
    }

    /// The claims of a provider ID token verified at `now`; the nonce is checked separately
    /// (`AppleNonce.isSatisfied(by:rawNonce:)`).
    package func verifyIDToken(_ token: String, now: Date = Date()) throws(TokenError) -> IDTokenClaims {
        try verify(token, as: IDTokenClaims.self, now: now)
    }
}
