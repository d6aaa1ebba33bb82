package import Contracts
package import Credentials
package import Foundation
package import RPC

/// Verifies the `authorization: Bearer <accessToken>` of a call against auth-svc's public keys
/// and the revoked sessions, and answers with the caller or with the `RPCError` API.md §3
/// prescribes.
///
/// Keys come from a ``KeySource`` through a ``CachedJWTVerifier``: fetched on first use,
/// cached by `kid`, refetched on an unknown `kid` at most once per `refetchInterval` (30 s,
/// DESIGN.md "Security") and once they are `keyMaxAge` old (10 minutes: a key auth-svc has
/// removed stops being trusted by then). While no keys have ever been fetched, every call that needs them
/// tries again, and fails with UNAVAILABLE `UPSTREAM_UNAVAILABLE` when the source does. A valid
/// token whose session the ``RevocationChecker`` reports revoked is refused with
/// `SESSION_REVOKED`.
///
/// Thread-safe.
package final class AccessTokenVerifier: Sendable {
    /// The `iss` every token must carry.
    package let issuer: String
    /// The audience every token's `aud` must name.
    package let audience: String

    private let keys: CachedJWTVerifier
    private let revocations: (any RevocationChecker)?

    /// A verifier of tokens issued by `issuer` for `audience`, with keys from `source`, and
    /// sessions checked against `revocations` when given.
    package init(
        issuer: String, audience: String, source: KeySource, refetchInterval: Duration = .seconds(30),
        keyMaxAge: Duration = .seconds(600), revocations: (any RevocationChecker)? = nil
    ) {
        self.issuer = issuer
        self.audience = audience
        self.revocations = revocations
        self.keys = CachedJWTVerifier(source: source, refetchInterval: refetchInterval, maxAge: keyMaxAge) { keys in
            JWTVerifier.accessTokens(keys: keys, issuer: issuer, audience: audience)
        }
    }

    /// The least time between two refetches caused by unknown `kid`s.
    package var refetchInterval: Duration { keys.refetchInterval }

    /// The caller named by an `authorization` header value.
    ///
    /// Throws UNAUTHENTICATED `MISSING_TOKEN` when the value is absent, blank or not a Bearer
    /// token, `ACCESS_TOKEN_EXPIRED` for an expired token, `SESSION_REVOKED` for a revoked
    /// session and `INVALID_ACCESS_TOKEN` for any other refusal; UNAVAILABLE
    /// `UPSTREAM_UNAVAILABLE` when no keys can be had.
    package func authenticate(authorization: String?, now: Date = Date()) async throws -> AuthenticatedUser {
        guard let token = Self.bearerToken(in: authorization) else {
            throw AuthReason.missingToken.error("Send authorization: Bearer <accessToken>.")
        }
        return try await authenticate(token: token, now: now)
    }

    /// The caller named by a bare access token; errors as ``authenticate(authorization:now:)``.
    package func authenticate(token: String, now: Date = Date()) async throws -> AuthenticatedUser {
        let claims: AccessTokenClaims
        do {
            claims = try await keys.verify(token, as: AccessTokenClaims.self, now: now)
        } catch .token(let error) {
            throw Self.rpcError(for: error)
        } catch .keysUnavailable(let cause) {
            throw GatewayReason.upstreamUnavailable.error("The keys that verify access tokens are not available.")
                .causedBy(cause)
        }
        if let revocations, try await revocations.isRevoked(sessionID: claims.sessionID) {
            throw AuthReason.sessionRevoked.error("The session has been revoked; sign in again.")
        }
        return AuthenticatedUser(
            id: claims.subject, sessionID: claims.sessionID, email: claims.email, emailVerified: claims.emailVerified)
    }

    /// The token of an `authorization: Bearer <token>` value (scheme case-insensitive, RFC 7235
    /// §2.1), or nil when the value is absent, blank or another scheme.
    package static func bearerToken(in header: String?) -> String? {
        guard let header else { return nil }
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        guard let space = trimmed.firstIndex(of: " ") else { return nil }
        guard trimmed[..<space].lowercased() == "bearer" else { return nil }
        let token = trimmed[space...].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }

    /// The API.md answer to a refused token: expired, or invalid for any other reason (the
    /// detail stays in `cause`, for logs, not for the caller).
    static func rpcError(for error: TokenError) -> RPCError {
        switch error {
        case .expired: AuthReason.accessTokenExpired.error("The access token has expired; refresh the session.").causedBy(error)
        default: AuthReason.invalidAccessToken.error("The access token is not valid.").causedBy(error)
        }
    }
}

/// Tells whether a session has been revoked: auth-svc asks its database, every other service
/// a ``RevocationFeed``.
package protocol RevocationChecker: Sendable {
    /// Whether the session `sessionID` (an access token's `sid`) is revoked.
    func isRevoked(sessionID: String) async throws -> Bool
}

extension KeySource {
    /// A source that calls auth-svc's `GetJwks` through `client`, giving up after `timeout`.
    package static func authService(client: RPCClient, timeout: Duration = .seconds(5)) -> KeySource {
        KeySource {
            let response = try await client.unary(
                AuthContract.getJwks, Empty(), options: CallOptions(timeout: timeout))
            return JWKSet(keys: response.keys.map(Credentials.JWK.init(contract:)))
        }
    }
}

extension Credentials.JWK {
    /// The key as `Credentials` models it, from the `GetJwks` message: the same JSON members,
    /// one for one.
    package init(contract key: Contracts.JWK) {
        self.init(
            kty: key.kty, use: key.use, alg: key.alg, kid: key.kid, crv: key.crv, x: key.x, y: key.y,
            n: key.n, e: key.e)
    }
}
