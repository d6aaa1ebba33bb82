import Crypto
package import Foundation

/// The payload of a Google or Apple ID token, as far as sign-in needs it (API.md §3 "ID tokens").
///
/// `aud` may be one string or an array. `email_verified` and `nonce_supported` are accepted as
/// JSON booleans or as the strings "true"/"false", because Apple has sent both. Unknown
/// claims are ignored.
package struct IDTokenClaims: Codable, Sendable, Hashable {
    /// `iss`: the provider, e.g. "https://appleid.apple.com" or "https://accounts.google.com".
    package var issuer: String
    /// `sub`: the provider's stable user id; users are keyed on (issuer, subject).
    package var subject: String
    /// `aud`: the client ids the token was issued to.
    package var audience: [String]
    /// `exp`: when the token stops being accepted.
    package var expiresAt: Date
    /// `iat`: when the provider signed the token.
    package var issuedAt: Date
    /// `email`: the user's address at the provider, if shared.
    package var email: String?
    /// `email_verified`: whether the provider verified `email`.
    package var emailVerified: Bool?
    /// `nonce`: for Apple, the hex SHA-256 of the raw nonce the app generated.
    package var nonce: String?
    /// `nonce_supported`: Apple's statement that the platform supports nonces, making one mandatory.
    package var nonceSupported: Bool?

    private enum CodingKeys: String, CodingKey {
        case issuer = "iss", subject = "sub", audience = "aud", expiresAt = "exp", issuedAt = "iat"
        case email, emailVerified = "email_verified", nonce, nonceSupported = "nonce_supported"
    }

    /// Claims with every member given (for tests that mint ID tokens); dates in whole seconds.
    package init(
        issuer: String, subject: String, audience: [String], expiresAt: Date, issuedAt: Date,
        email: String? = nil, emailVerified: Bool? = nil, nonce: String? = nil, nonceSupported: Bool? = nil
    ) {
        self.issuer = issuer
        self.subject = subject
        self.audience = audience
        self.expiresAt = NumericDate.wholeSeconds(expiresAt)
        self.issuedAt = NumericDate.wholeSeconds(issuedAt)
        self.email = email
        self.emailVerified = emailVerified
        self.nonce = nonce
        self.nonceSupported = nonceSupported
    }

    /// Reads the claims from a token payload.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        issuer = try container.decode(String.self, forKey: .issuer)
        subject = try container.decode(String.self, forKey: .subject)
        audience = try container.decodeAudience(forKey: .audience)
        expiresAt = try container.decodeNumericDate(forKey: .expiresAt)
        issuedAt = try container.decodeNumericDate(forKey: .issuedAt)
        email = try container.decodeIfPresent(String.self, forKey: .email)
        emailVerified = try container.decodeLenientBoolIfPresent(forKey: .emailVerified)
        nonce = try container.decodeIfPresent(String.self, forKey: .nonce)
        nonceSupported = try container.decodeLenientBoolIfPresent(forKey: .nonceSupported)
    }

    /// Writes the claims as a token payload.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(issuer, forKey: .issuer)
        try container.encode(subject, forKey: .subject)
        try container.encodeAudience(audience, forKey: .audience)
        try container.encodeNumericDate(expiresAt, forKey: .expiresAt)
        try container.encodeNumericDate(issuedAt, forKey: .issuedAt)
        try container.encodeIfPresent(email, forKey: .email)
        try container.encodeIfPresent(emailVerified, forKey: .emailVerified)
        try container.encodeIfPresent(nonce, forKey: .nonce)
        try container.encodeIfPresent(nonceSupported, forKey: .nonceSupported)
    }
}

/// Sign in with Apple's nonce binding: the app sends SHA-256 of a random raw nonce to Apple,
/// which puts its hex into the ID token's `nonce`; the app then gives us the raw nonce, and the
/// token only counts if the two agree — so a stolen ID token cannot be replayed by someone
/// without the raw nonce. Stateless and thread-safe.
package enum AppleNonce {
    /// The lowercase hex SHA-256 of `rawNonce`'s UTF-8 bytes: what Apple's `nonce` claim holds.
    package static func hash(rawNonce: String) -> String {
        Hex.encode(SHA256.hash(data: Array(rawNonce.utf8)))
    }

    /// Whether `claim` is `hex(SHA256(rawNonce))`, compared in constant time (hex in either case).
    package static func matches(rawNonce: String, claim: String) -> Bool {
        ConstantTime.equals(hash(rawNonce: rawNonce), claim.lowercased())
    }

    /// Whether the token's nonce requirements are met by the `rawNonce` the client sent: a
    /// nonce in the token must match it, a token with `nonce_supported` must carry one, and a
    /// raw nonce sent by the client must be matched by the token.
    package static func isSatisfied(by claims: IDTokenClaims, rawNonce: String?) -> Bool {
        switch (claims.nonce, rawNonce) {
        case (let claim?, let rawNonce?):
            return matches(rawNonce: rawNonce, claim: claim)
        case (nil, nil):
            return claims.nonceSupported != true
        case (.some, nil), (nil, .some):
            return false
        }
    }
}
