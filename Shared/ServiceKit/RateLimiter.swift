internal import Synchronization

/// Token buckets by key (a client address, an email address): `burst` requests at once, then
/// one more every `refillInterval`. Keys idle long enough to be full again are forgotten, so
/// memory stays bounded by the keys active within one refill of the whole bucket.
///
/// Thread-safe: the buckets live behind a `Mutex`.
package final class RateLimiter: Sendable {
    /// Requests allowed at once.
    package let burst: Int
    /// The time that earns one more request.
    package let refillInterval: Duration

    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant

        /// The tokens it holds at `now`, refilled at `perSecond` since it was last updated
        /// (without the cap at the burst).
        func tokens(at now: ContinuousClock.Instant, perSecond: Double) -> Double {
            tokens + (now - updated).seconds * perSecond
        }
    }

    private struct State {
        var buckets: [String: Bucket] = [:]
        var lastSweep = ContinuousClock.now
    }

    private let state = Mutex(State())

    /// A limiter allowing `burst` requests at once and one per `refillInterval` after that.
    package init(burst: Int, refillInterval: Duration) {
        precondition(burst > 0 && refillInterval > .zero, "a rate limit needs a positive burst and interval")
        self.burst = burst
        self.refillInterval = refillInterval
    }

    /// Takes one request's token for `key`; false when the bucket is empty (the request is
    /// over the limit and should be refused or dropped).
    package func allow(_ key: String, now: ContinuousClock.Instant = .now) -> Bool {
        admit(key, now: now) == nil
    }

    /// Takes one request's token for `key`: nil when there was one, otherwise how long until
    /// the bucket holds one again (what a refused caller is told to wait).
    package func admit(_ key: String, now: ContinuousClock.Instant = .now) -> Duration? {
        let perSecond = 1 / refillInterval.seconds
        return state.withLock { state in
            if now - state.lastSweep > refillInterval * burst {
                sweep(&state, now: now, perSecond: perSecond)
            }
            var bucket = state.buckets[key] ?? Bucket(tokens: Double(burst), updated: now)
            bucket.tokens = min(Double(burst), bucket.tokens(at: now, perSecond: perSecond))
            bucket.updated = now
            state.buckets[key] = bucket
            guard bucket.tokens >= 1 else { return refillInterval * (1 - bucket.tokens) }
            state.buckets[key]?.tokens -= 1
            return nil
        }
    }

    /// Whether `key`'s bucket is empty now (its next request would be refused), without
    /// taking a token.
    package func isEmpty(_ key: String, now: ContinuousClock.Instant = .now) -> Bool {
        let perSecond = 1 / refillInterval.seconds
        return state.withLock { state in
            guard let bucket = state.buckets[key] else { return false }
            return bucket.tokens(at: now, perSecond: perSecond) < 1
        }
    }

    /// Drops the buckets that have refilled completely: they behave as if never seen.
    private func sweep(_ state: inout State, now: ContinuousClock.Instant, perSecond: Double) {
        state.buckets = state.buckets.filter { _, bucket in
            bucket.tokens(at: now, perSecond: perSecond) < Double(burst)
        }
        state.lastSweep = now
    }
}
