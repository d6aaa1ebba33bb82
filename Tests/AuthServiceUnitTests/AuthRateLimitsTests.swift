@testable import auth_svc
import Contracts
import RPC
import ServiceKit
import Testing
import JSON

/// auth-svc's rate limits (README "Rate limits"), on ServiceKit's `RateLimiter`.
@Suite("AuthRateLimits: the configured buckets")
struct AuthRateLimitsTests {
    private let start = ContinuousClock.now

    @Test(
        "auth-svc's limits are the README's: SignUp 10 then 1/30 s, email requests 5 then 1/30 s, per email 3 then 1/5 min",
        arguments: [("signUp", 10, 30), ("emailRequests", 5, 30), ("perRecipient", 3, 300)] as [(String, Int, Int64)])
    func configuredLimits(name: String, burst: Int, seconds: Int64) {
        let limits = AuthRateLimits()
        let limiter =
            switch name {
            case "signUp": limits.signUp
            case "emailRequests": limits.emailRequests
            default: limits.perRecipient
            }
        let interval = Duration.seconds(seconds)
        #expect(limiter.burst == burst)
        #expect(limiter.refillInterval == interval)
        let answers = (0...burst).map { _ in limiter.allow("k", now: start) }
        #expect(answers == Array(repeating: true, count: burst) + [false])
        #expect(limiter.allow("k", now: start + interval))
    }

    @Test("an exhausted limit is reported as RATE_LIMITED, saying how long to wait")
    func rateLimitedError() throws {
        let limiter = RateLimiter(burst: 1, refillInterval: .seconds(30))
        try AuthRateLimits.check(limiter, "k")
        let error = try #require(throws: RPCError.self) { try AuthRateLimits.check(limiter, "k") }
        #expect(error.reason == AuthReason.rateLimited.rawValue)
        #expect(error.code == AuthReason.rateLimited.code)
        let wait = try #require(error.details?["retryAfterSeconds"]?.numberValue)
        #expect((29...30).contains(wait), "retryAfterSeconds \(wait)")
        #expect(error.message == "Too many requests; try again in \(Int(wait)) s.")
    }
}
