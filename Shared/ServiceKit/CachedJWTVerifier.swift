package import Credentials
package import Foundation
internal import Synchronization

/// A `JWTVerifier` over keys fetched from a ``KeySource``: fetched lazily on first use, cached
/// by `kid`, and refetched when a token names an unknown `kid` (the issuer rotated its key) —
/// at most once per `refetchInterval` — before one more verification. Concurrent fetches share
/// one call to the source; while no keys were ever fetched, every verification tries again.
///
/// Cached keys are trusted for `maxAge`, then fetched again before the next verification, so
/// a key the issuer has removed (rotated out, or compromised) stops being accepted within that
/// time — no unknown `kid` would ever make a long-running process look. While the source
/// cannot be reached, the old keys stay in use (a refetch is tried at most once per
/// `refetchInterval`): an issuer that is down does not lock every signed-in user out.
///
/// Used for auth-svc's access tokens (``AccessTokenVerifier``) and for Google's and Apple's ID
/// tokens in auth-svc.
///
/// Thread-safe: the state lives behind a `Mutex` that is never held across an `await`.
package final class CachedJWTVerifier: Sendable {
    /// Why a token could not be verified.
    package enum Failure: Error, Sendable {
        /// The token failed a check.
        case token(TokenError)
        /// No keys could be fetched; the token was not looked at.
        case keysUnavailable(any Error)
    }

    /// The least time between two refetches caused by unknown `kid`s (or by keys past their
    /// age while the source fails).
    package let refetchInterval: Duration
    /// How long fetched keys are used before they are fetched again.
    package let maxAge: Duration

    private let source: KeySource
    private let makeVerifier: @Sendable (JWKSet) -> JWTVerifier
    private let state = Mutex(State())

    /// What the verifier knows; guarded by `state`.
    private struct State {
        /// The verifier over the cached keys and when they were fetched; nil until the first
        /// fetch succeeds.
        var cached: (verifier: JWTVerifier, fetchedAt: ContinuousClock.Instant)?
        /// The fetch in progress, which every caller that needs keys awaits.
        var inFlight: Task<JWTVerifier, any Error>?
        /// When the last refetch for an unknown `kid` started.
        var lastRefetch: ContinuousClock.Instant?
    }

    /// A verifier with keys from `source`, checking what `makeVerifier` builds from them.
    package init(
        source: KeySource, refetchInterval: Duration = .seconds(30), maxAge: Duration = .seconds(600),
        makeVerifier: @escaping @Sendable (JWKSet) -> JWTVerifier
    ) {
        self.source = source
        self.refetchInterval = refetchInterval
        self.maxAge = maxAge
        self.makeVerifier = makeVerifier
    }

    /// The claims of `token`, verified at `now` with the cached keys (refetched once when the
    /// token's `kid` is unknown).
    package func verify<Claims: Decodable>(
        _ token: String, as claimsType: Claims.Type = Claims.self, now: Date = Date()
    ) async throws(Failure) -> Claims {
        let verifier: JWTVerifier
        do {
            verifier = try await cachedVerifier()
        } catch {
            throw .keysUnavailable(error)
        }
        do {
            return try verifier.verify(token, as: Claims.self, now: now)
        } catch .unknownKey(let kid) {
            guard let refreshed = await refreshedVerifier() else { throw .token(.unknownKey(kid: kid)) }
            do {
                return try refreshed.verify(token, as: Claims.self, now: now)
            } catch {
                throw .token(error)
            }
        } catch {
            throw .token(error)
        }
    }

    /// The verifier over the cached keys; fetched first when there are none or they are past
    /// `maxAge` (then the old ones serve if the fetch fails).
    private func cachedVerifier() async throws -> JWTVerifier {
        enum Step {
            case ready(JWTVerifier)
            case wait(Task<JWTVerifier, any Error>, fallback: JWTVerifier?)
        }
        let now = ContinuousClock.now
        let step: Step = state.withLock { state in
            guard let (verifier, fetchedAt) = state.cached else {
                return .wait(state.inFlight ?? startFetch(in: &state), fallback: nil)
            }
            if now - fetchedAt < maxAge { return .ready(verifier) }
            guard let refetch = throttledRefetch(in: &state, now: now) else { return .ready(verifier) }
            return .wait(refetch, fallback: verifier)
        }
        switch step {
        case .ready(let verifier):
            return verifier
        case .wait(let task, let fallback):
            do {
                return try await task.value
            } catch {
                guard let fallback else { throw error }
                return fallback
            }
        }
    }

    private func refreshedVerifier() async -> JWTVerifier? {
        let now = ContinuousClock.now
        let task = state.withLock { throttledRefetch(in: &$0, now: now) }
        return try? await task?.value
    }

    /// The fetch under way, or one started now unless the last refetch began less than
    /// `refetchInterval` ago (nil then). Called under the lock.
    private func throttledRefetch(in state: inout State, now: ContinuousClock.Instant) -> Task<JWTVerifier, any Error>? {
        if let inFlight = state.inFlight { return inFlight }
        if let last = state.lastRefetch, now - last < refetchInterval { return nil }
        state.lastRefetch = now
        return startFetch(in: &state)
    }

    private func startFetch(in state: inout State) -> Task<JWTVerifier, any Error> {
        let task = Task { [source, makeVerifier] in
            let result: Result<JWTVerifier, any Error>
            do {
                result = .success(makeVerifier(try await source.fetchKeys()))
            } catch {
                result = .failure(error)
            }
            self.state.withLock { state in
                state.inFlight = nil
                if case .success(let verifier) = result { state.cached = (verifier, .now) }
            }
            return try result.get()
        }
        state.inFlight = task
        return task
    }
}

/// Where a verifier's keys come from: auth-svc's `GetJwks`, a provider's JWK Set, or a test.
///
/// A closure, so tests pass keys they minted themselves. `Sendable`; the closure may be called
/// from any task.
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
}
