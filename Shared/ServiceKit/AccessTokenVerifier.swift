package import Contracts
package import Credentials
package import Foundation
internal import RPC
package import RPCHTTP2
internal import Synchronization

/// Verifies the `authorization: Bearer <accessToken>` of a call against auth-svc's public keys
/// and answers with the caller, or with the `RPCError` API.md §3 prescribes.
///
/// Keys come from a ``KeySource``, fetched lazily on first use and cached by `kid`. A token
/// naming an unknown `kid` (auth-svc rotated its key) triggers one refetch, at most once per
/// `refetchInterval` (30 s, DESIGN.md "Security"), and one more verification. Concurrent
/// fetches share one call to the source. While no keys have ever been fetched, every call
/// that needs them tries again, and fails with UNAVAILABLE `UPSTREAM_UNAVAILABLE` when the
/// source does.
///
/// Thread-safe: the state lives behind a `Mutex` that is never held across an `await`.
package final class AccessTokenVerifier: Sendable {
    /// The `iss` every token must carry.
    package let issuer: String
    /// The audience every token's `aud` must name.
    package let audience: String
    /// The least time between two refetches caused by unknown `kid`s.
    package let refetchInterval: Duration

    private let source: KeySource
    private let state = Mutex(State())

    /// What the verifier knows; guarded by `state`.
    private struct State {
        /// The verifier over the cached keys; nil until the first fetch succeeds.
        var verifier: JWTVerifier?
        /// The fetch in progress, which every caller that needs keys awaits.
        var inFlight: Task<JWTVerifier, any Error>?
        /// When the last refetch for an unknown `kid` started.
        var lastRefetch: ContinuousClock.Instant?
    }

    /// A verifier of tokens issued by `issuer` for `audience`, with keys from `source`.
    package init(
        issuer: String, audience: String, source: KeySource, refetchInterval: Duration = .seconds(30)
    ) {
        self.issuer = issuer
        self.audience = audience
        self.source = source
        self.refetchInterval = refetchInterval
    }

    /// The caller named by an `authorization` header value.
    ///
    /// Throws UNAUTHENTICATED `MISSING_TOKEN` when the value is absent, blank or not a Bearer
    /// token, `ACCESS_TOKEN_EXPIRED` for an expired token and `INVALID_ACCESS_TOKEN` for any
    /// other refusal; UNAVAILABLE `UPSTREAM_UNAVAILABLE` when no keys can be had.
    package func authenticate(authorization: String?, now: Date = Date()) async throws -> AuthenticatedUser {
        guard let token = Self.bearerToken(in: authorization) else {
            throw AuthReason.missingToken.error("Send authorization: Bearer <accessToken>.")
        }
        return try await authenticate(token: token, now: now)
    }

    /// The caller named by a bare access token; errors as ``authenticate(authorization:now:)``.
    package func authenticate(token: String, now: Date = Date()) async throws -> AuthenticatedUser {
        let verifier = try await cachedVerifier()
        do {
            return try Self.user(verifying: token, with: verifier, now: now)
        } catch .unknownKey(let kid) {
            // auth-svc may have rotated its key since the last fetch: refetch (rate-limited)
            // and try once more with whatever keys that gives.
            guard let refreshed = await refreshedVerifier() else {
                throw Self.rpcError(for: .unknownKey(kid: kid))
            }
            do {
                return try Self.user(verifying: token, with: refreshed, now: now)
            } catch {
                throw Self.rpcError(for: error)
            }
        } catch {
            throw Self.rpcError(for: error)
        }
    }

    /// The token of a `Bearer` header value, or nil when there is none. The scheme is matched
    /// case-insensitively (RFC 9110 §11.1).
    static func bearerToken(in header: String?) -> String? {
        guard let header else { return nil }
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        guard let space = trimmed.firstIndex(of: " ") else { return nil }
        guard trimmed[..<space].lowercased() == "bearer" else { return nil }
        let token = trimmed[space...].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }

    /// Verifies `token` and reads the caller from its claims.
    private static func user(
        verifying token: String, with verifier: JWTVerifier, now: Date
    ) throws(TokenError) -> AuthenticatedUser {
        let claims = try verifier.verifyAccessToken(token, now: now)
        return AuthenticatedUser(
            id: claims.subject, sessionID: claims.sessionID, email: claims.email,
            emailVerified: claims.emailVerified)
    }

    /// The API answer for a refused token (API.md §3); the cause stays for the log.
    static func rpcError(for error: TokenError) -> RPCError {
        var answer =
            switch error {
            case .expired: AuthReason.accessTokenExpired.error("The access token has expired; refresh the session.")
            default: AuthReason.invalidAccessToken.error("The access token is not valid.")
            }
        answer.cause = error
        return answer
    }

    // MARK: Keys

    /// The verifier over the cached keys, fetching them first if there are none.
    private func cachedVerifier() async throws -> JWTVerifier {
        enum Step {
            case ready(JWTVerifier)
            case wait(Task<JWTVerifier, any Error>)
        }
        let step: Step = state.withLock { state in
            if let verifier = state.verifier { return .ready(verifier) }
            return .wait(state.inFlight ?? startFetch(in: &state))
        }
        switch step {
        case .ready(let verifier):
            return verifier
        case .wait(let task):
            do {
                return try await task.value
            } catch {
                throw RPCError(
                    code: GatewayReason.upstreamUnavailable.code, reason: GatewayReason.upstreamUnavailable.rawValue,
                    message: "The keys that verify access tokens are not available.", cause: error)
            }
        }
    }

    /// A verifier over freshly fetched keys, or nil when the last refetch was too recent or
    /// the fetch failed (the cached keys then stay in use).
    private func refreshedVerifier() async -> JWTVerifier? {
        let now = ContinuousClock.now
        let task: Task<JWTVerifier, any Error>? = state.withLock { state in
            if let inFlight = state.inFlight { return inFlight }
            if let last = state.lastRefetch, now - last < refetchInterval { return nil }
            state.lastRefetch = now
            return startFetch(in: &state)
        }
        return try? await task?.value
    }

    /// Starts the one fetch that concurrent callers share; it stores its result when done.
    /// Called with the lock held, so the task cannot finish before it is recorded.
    private func startFetch(in state: inout State) -> Task<JWTVerifier, any Error> {
        let task = Task { [source, issuer, audience] in
            let result: Result<JWTVerifier, any Error>
            do {
                let keys = try await source.fetchKeys()
                result = .success(JWTVerifier.accessTokens(keys: keys, issuer: issuer, audience: audience))
            } catch {
                result = .failure(error)
            }
            self.state.withLock { state in
                state.inFlight = nil
                if case .success(let verifier) = result { state.verifier = verifier }
            }
            return try result.get()
        }
        state.inFlight = task
        return task
    }
}

/// Where ``AccessTokenVerifier`` gets the public keys that verify access tokens.
///
/// A closure, so tests pass keys they minted themselves and services pass
/// ``authService(client:timeout:)``. `Sendable`; the closure may be called from any task.
package struct KeySource: Sendable {
    /// Fetches the current key set.
    private let fetch: @Sendable () async throws -> JWKSet

    /// A source that calls `fetch` for every fetch.
    package init(_ fetch: @escaping @Sendable () async throws -> JWKSet) {
        self.fetch = fetch
    }

    /// The current key set; throws when it cannot be had right now.
    package func fetchKeys() async throws -> JWKSet {
        try await fetch()
    }

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
