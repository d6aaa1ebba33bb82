import Foundation
import Contracts
import RPC
import ServiceKit
import Telemetry

/// Per-client token buckets in front of every routed and composed method (API.md §7): a
/// signed-in caller is limited by user id, whichever address it calls from; an anonymous
/// caller by its address. Over the limit, the call ends with RESOURCE_EXHAUSTED
/// `RATE_LIMITED` before any upstream sees it. Health and Describe count too: cheap, but not
/// free — unlimited, one client could keep a loop busy answering them (or, on a shut window,
/// hold their answers). An orchestrator's probe, a few calls a minute from its own address,
/// stays far below any limit.
///
/// Runs after ``AuthenticationInterceptor``, which has set the user. Thread-safe.
struct RateLimitInterceptor: ImmediateServerInterceptor {
    /// The buckets; nil when limits are off.
    let limiter: RateLimiter?
    /// Counts the calls refused, when the gateway counts (``GatewayMetrics/Limit/requests``).
    let refusals: Counter?

    /// `perSecond` requests a second with bursts of `burst`; a rate of 0 turns limits off.
    /// Each call refused counts in `refusals`, when given.
    init(perSecond: Double, burst: Int, refusals: Counter? = nil) {
        limiter = perSecond > 0 ? RateLimiter(burst: max(1, burst), refillInterval: .seconds(1 / perSecond)) : nil
        self.refusals = refusals
    }

    func applies(to method: MethodInfo) -> Bool { limiter != nil }

    func prepareImmediately(_ context: inout ServerContext) throws {
        guard let limiter else { return }
        if let wait = limiter.admit(context.clientKey) {
            refusals?.increment()
            throw GatewayError.rateLimited(retryAfter: wait).rpcError
        }
    }
}
