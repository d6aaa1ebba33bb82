import Foundation

/// The registered claims every verified token is checked on (RFC 7519 §4.1), read from the
/// payload before it is decoded as the caller's claims type.
struct RegisteredClaims: Decodable, Sendable {
    /// `iss`, if present.
    var issuer: String?
    /// `aud` as a list, if present (one string or an array on the wire).
    var audience: [String]?
    /// `exp`; required.
    var expiresAt: Date
    /// `nbf`, if present.
    var notBefore: Date?
    /// `iat`, if present.
    var issuedAt: Date?
    /// `typ`, if present.
    var type: String?

    private enum CodingKeys: String, CodingKey {
        case issuer = "iss", audience = "aud", expiresAt = "exp", notBefore = "nbf", issuedAt = "iat"
        case type = "typ"
    }

    /// Reads the registered claims; throws when the payload is not a JSON object, `exp` is
    /// missing, or a present claim has the wrong JSON type.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        issuer = try container.decodeIfPresent(String.self, forKey: .issuer)
        audience = try container.contains(.audience) ? container.decodeAudience(forKey: .audience) : nil
        expiresAt = try container.decodeNumericDate(forKey: .expiresAt)
        notBefore = try container.decodeNumericDateIfPresent(forKey: .notBefore)
        issuedAt = try container.decodeNumericDateIfPresent(forKey: .issuedAt)
        type = try container.decodeIfPresent(String.self, forKey: .type)
    }
}

/// The payload checks of `JWTVerifier`, run only after the signature verified.
extension JWTVerifier {
    /// Checks type, issuer, audience and validity period of `claims` at `now`, in that order.
    func check(_ claims: RegisteredClaims, now: Date) throws(TokenError) {
        if let expectedType, claims.type != expectedType {
            throw .wrongType
        }
        guard let issuer = claims.issuer, issuers.contains(issuer) else {
            throw .wrongIssuer
        }
        guard let audience = claims.audience, audience.contains(where: audiences.contains) else {
            throw .wrongAudience
        }
        // RFC 7519 §4.1.4: the token is valid only while now is before exp.
        guard now < claims.expiresAt.addingTimeInterval(leeway) else {
            throw .expired
        }
        if let notBefore = claims.notBefore, notBefore > now.addingTimeInterval(leeway) {
            throw .notYetValid
        }
        if let issuedAt = claims.issuedAt, issuedAt > now.addingTimeInterval(leeway) {
            throw .notYetValid
        }
    }
}
