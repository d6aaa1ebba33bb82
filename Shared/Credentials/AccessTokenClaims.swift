package import Foundation

/// The payload of an auth-svc access token (API.md §3 "Access tokens").
///
/// JSON claim names: `iss`, `sub` (user id), `aud`, `exp`, `iat` (NumericDate seconds), `sid`
/// (session id), `email`, `email_verified`, and `typ` ("access"), which tells an access token
/// apart from any other JWT signed by the same keys. Dates are kept in whole seconds.
package struct AccessTokenClaims: Codable, Sendable, Hashable {
    /// The `typ` claim value of access tokens.
    package static let accessType = "access"
    /// How long an access token lives: 15 minutes.
    package static let defaultLifetime: TimeInterval = 15 * 60

    /// `iss`: the issuer, auth-svc's configured URL or name.
    package var issuer: String
    /// `sub`: the user id.
    package var subject: String
    /// `aud`: the audience, one string.
    package var audience: String
    /// `exp`: when the token stops being accepted.
    package var expiresAt: Date
    /// `iat`: when the token was signed.
    package var issuedAt: Date
    /// `sid`: the session the token belongs to, checked against revocations.
    package var sessionID: String
    /// `email`: the user's email address at signing time.
    package var email: String
    /// `email_verified`: whether that address was verified at signing time.
    package var emailVerified: Bool
    /// `typ`: the kind of token; `accessType` on access tokens, which verifiers require.
    package var type: String?

    private enum CodingKeys: String, CodingKey {
        case issuer = "iss", subject = "sub", audience = "aud", expiresAt = "exp", issuedAt = "iat"
        case sessionID = "sid", email, emailVerified = "email_verified", type = "typ"
    }

    /// Claims with every member given; dates are truncated to whole seconds.
    package init(
        issuer: String, subject: String, audience: String, expiresAt: Date, issuedAt: Date,
        sessionID: String, email: String, emailVerified: Bool, type: String? = AccessTokenClaims.accessType
    ) {
        self.issuer = issuer
        self.subject = subject
        self.audience = audience
        self.expiresAt = NumericDate.wholeSeconds(expiresAt)
        self.issuedAt = NumericDate.wholeSeconds(issuedAt)
        self.sessionID = sessionID
        self.email = email
        self.emailVerified = emailVerified
        self.type = type
    }

    /// Claims for a token signed at `issuedAt` that lives `lifetime` seconds (15 minutes).
    package init(
        issuer: String, subject: String, audience: String, sessionID: String, email: String,
        emailVerified: Bool, issuedAt: Date = Date(), lifetime: TimeInterval = AccessTokenClaims.defaultLifetime
    ) {
        let issued = NumericDate.wholeSeconds(issuedAt)
        self.init(
            issuer: issuer, subject: subject, audience: audience, expiresAt: issued + lifetime,
            issuedAt: issued, sessionID: sessionID, email: email, emailVerified: emailVerified)
    }

    /// Reads the claims from a token payload.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        issuer = try container.decode(String.self, forKey: .issuer)
        subject = try container.decode(String.self, forKey: .subject)
        audience = try container.decode(String.self, forKey: .audience)
        expiresAt = try container.decodeNumericDate(forKey: .expiresAt)
        issuedAt = try container.decodeNumericDate(forKey: .issuedAt)
        sessionID = try container.decode(String.self, forKey: .sessionID)
        email = try container.decode(String.self, forKey: .email)
        emailVerified = try container.decodeLenientBoolIfPresent(forKey: .emailVerified) ?? false
        type = try container.decodeIfPresent(String.self, forKey: .type)
    }

    /// Writes the claims as a token payload.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(issuer, forKey: .issuer)
        try container.encode(subject, forKey: .subject)
        try container.encode(audience, forKey: .audience)
        try container.encodeNumericDate(expiresAt, forKey: .expiresAt)
        try container.encodeNumericDate(issuedAt, forKey: .issuedAt)
        try container.encode(sessionID, forKey: .sessionID)
        try container.encode(email, forKey: .email)
        try container.encode(emailVerified, forKey: .emailVerified)
        try container.encodeIfPresent(type, forKey: .type)
    }
}
