import ServiceKit
import Testing

/// `RateLimiter`'s token buckets, driven by explicit instants instead of waiting.
@Suite("RateLimiter: token buckets per key")
struct RateLimiterTests {
    private let start = ContinuousClock.now

    @Test("a key gets its burst at once, then is refused")
    func burstThenRefusal() {
        let limiter = RateLimiter(burst: 3, refillInterval: .seconds(30))
        let answers = (0..<4).map { _ in limiter.allow("10.0.0.1", now: start) }
        #expect(answers == [true, true, true, false])
    }

    @Test("one more request is earned per refill interval, and no sooner")
    func refill() {
        let limiter = RateLimiter(burst: 2, refillInterval: .seconds(30))
        #expect(limiter.allow("k", now: start))
        #expect(limiter.allow("k", now: start))
        #expect(!limiter.allow("k", now: start + .seconds(29)))
        #expect(limiter.allow("k", now: start + .seconds(30)))
        #expect(!limiter.allow("k", now: start + .seconds(31)))
    }

    @Test("a long idle period refills the bucket to the burst, not beyond")
    func refillCapsAtBurst() {
        let limiter = RateLimiter(burst: 2, refillInterval: .seconds(30))
        #expect(limiter.allow("k", now: start))
        #expect(limiter.allow("k", now: start))
        let later = start + .seconds(3600)
        let answers = (0..<3).map { _ in limiter.allow("k", now: later) }
        #expect(answers == [true, true, false])
    }

    @Test("whether a bucket is empty is answered without taking a token")
    func isEmptyPeeks() {
        let limiter = RateLimiter(burst: 2, refillInterval: .seconds(30))
        #expect(!limiter.isEmpty("k", now: start))  // never seen: full
        #expect(limiter.allow("k", now: start))
        for _ in 0..<5 { #expect(!limiter.isEmpty("k", now: start)) }
        #expect(limiter.allow("k", now: start))
        #expect(limiter.isEmpty("k", now: start))
        #expect(limiter.isEmpty("k", now: start + .seconds(29)))
        #expect(!limiter.isEmpty("k", now: start + .seconds(30)))
        #expect(limiter.allow("k", now: start + .seconds(30)))
    }

    @Test("keys are limited independently")
    func independentKeys() {
        let limiter = RateLimiter(burst: 1, refillInterval: .seconds(300))
        #expect(limiter.allow("ada@example.com", now: start))
        #expect(!limiter.allow("ada@example.com", now: start))
        #expect(limiter.allow("grace@example.com", now: start))
        #expect(!limiter.allow("grace@example.com", now: start + .seconds(1)))
    }

    @Test("a refused request learns how long until the bucket holds a token again")
    func admitSaysHowLongToWait() {
        let limiter = RateLimiter(burst: 2, refillInterval: .seconds(30))
        #expect(limiter.admit("k", now: start) == nil)
        #expect(limiter.admit("k", now: start) == nil)
        #expect(about(limiter.admit("k", now: start), .seconds(30)))
        #expect(about(limiter.admit("k", now: start + .seconds(20)), .seconds(10)))  // refused: no token taken
        #expect(limiter.admit("k", now: start + .seconds(30)) == nil)
        #expect(about(limiter.admit("k", now: start + .seconds(30)), .seconds(30)))
    }

    /// Whether `wait` is `expected` but for the rounding of the bucket's fractional tokens.
    private func about(_ wait: Duration?, _ expected: Duration) -> Bool {
        guard let wait else { return false }
        return wait - expected < .microseconds(1) && expected - wait < .microseconds(1)
    }
}
