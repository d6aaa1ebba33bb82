/// The JWS signature algorithms this package signs or verifies (RFC 7518 §3.1, RFC 8037 §3.1).
///
/// Anything else a token names — `none`, the HMAC family, PS256 — is not representable, so a
/// verifier cannot be talked into it: such a header fails with `TokenError.unsupportedAlgorithm`.
package enum JWSAlgorithm: String, Sendable, Hashable, Codable, CaseIterable {
    /// Ed25519 signatures (RFC 8037): what auth-svc signs access tokens with by default.
    case edDSA = "EdDSA"
    /// ECDSA over P-256 with SHA-256 (RFC 7518 §3.4): the alternative for access tokens.
    case es256 = "ES256"
    /// RSASSA-PKCS1-v1_5 with SHA-256 (RFC 7518 §3.3): Google and Apple ID tokens, verify only.
    case rs256 = "RS256"

    /// The JWK key type (`kty`) a key must have to verify this algorithm.
    package var keyType: String {
        switch self {
        case .edDSA: "OKP"
        case .es256: "EC"
        case .rs256: "RSA"
        }
    }

    /// The JWK curve (`crv`) a key must name for this algorithm, or nil for RSA.
    package var curve: String? {
        switch self {
        case .edDSA: "Ed25519"
        case .es256: "P-256"
        case .rs256: nil
        }
    }

    /// The algorithms auth-svc's access tokens may use; the key decides which one applies.
    package static let accessTokenAlgorithms: Set<JWSAlgorithm> = [.edDSA, .es256]

    /// The only algorithm accepted on provider ID tokens (API.md §3 "ID tokens").
    package static let idTokenAlgorithms: Set<JWSAlgorithm> = [.rs256]
}

/// The JOSE header of a compact JWS, as far as this package reads or writes it (RFC 7515 §4.1).
///
/// `alg` stays a string so that an unknown value is told apart from a malformed header.
/// Headers that point elsewhere for keys (`jku`, `jwk`, `x5u`, `x5c`) are ignored on purpose:
/// keys only ever come from the verifier's configured set.
struct JWSHeader: Codable, Sendable, Equatable {
    /// The signature algorithm the token claims to use.
    var alg: String
    /// The identifier of the signing key in the issuer's key set.
    var kid: String?
    /// The media type of the whole token; "JWT" on the tokens this package signs.
    var typ: String?
    /// Extensions the recipient must understand (RFC 7515 §4.1.11); none are, so any fails.
    var crit: [String]?

    /// A header for a token signed with `algorithm` by the key `kid`.
    init(alg: String, kid: String?, typ: String? = "JWT", crit: [String]? = nil) {
        self.alg = alg
        self.kid = kid
        self.typ = typ
        self.crit = crit
    }
}
