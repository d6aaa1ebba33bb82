/// Why a JWT was refused by `JWTVerifier`; one case per answer a service gives for it.
///
/// Services map these to API reasons: for access tokens `expired` becomes
/// `ACCESS_TOKEN_EXPIRED` and every other case `INVALID_ACCESS_TOKEN`; for provider ID tokens
/// every case becomes `INVALID_CREDENTIAL`. `unknownKey` additionally tells the caller that its
/// key set may be stale and is worth refetching (at most once per 30 s, DESIGN.md "Security").
/// The descriptions are safe to log: they never contain the token or its claims.
package enum TokenError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Not a compact JWS with a JSON header and payload, a required claim is missing, or the
    /// claims do not decode as the expected type.
    case malformed
    /// The header's `alg` is not allowed for this use (`none`, HS256, …) or does not fit the
    /// key its `kid` names.
    case unsupportedAlgorithm
    /// No key with this `kid` is in the verifier's key set.
    case unknownKey(kid: String)
    /// The signature does not verify under the key.
    case badSignature
    /// `iss` is missing or not one of the expected issuers.
    case wrongIssuer
    /// `aud` is missing or does not contain an expected audience.
    case wrongAudience
    /// `exp` lies in the past, beyond the leeway.
    case expired
    /// `nbf` or `iat` lies in the future, beyond the leeway.
    case notYetValid
    /// The `typ` claim is not the one this verifier expects, e.g. an ID token presented as an
    /// access token.
    case wrongType

    /// Whether the caller's key set may be out of date: the token names a `kid` it does not
    /// hold, so refetching the keys (rate-limited) and verifying once more may succeed.
    package var suggestsKeyRefetch: Bool {
        if case .unknownKey = self { true } else { false }
    }

    /// A short English phrase for logs.
    package var description: String {
        switch self {
        case .malformed: "malformed token"
        case .unsupportedAlgorithm: "algorithm not allowed for this key or use"
        case .unknownKey(let kid): "no key with kid \(kid)"
        case .badSignature: "signature does not verify"
        case .wrongIssuer: "unexpected issuer"
        case .wrongAudience: "unexpected audience"
        case .expired: "token expired"
        case .notYetValid: "token not yet valid"
        case .wrongType: "unexpected token type"
        }
    }
}
