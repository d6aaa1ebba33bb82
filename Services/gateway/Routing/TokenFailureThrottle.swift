import Contracts
import RPC
import ServiceKit
import Telemetry

/// Access-token checks in front of the gateway's routes, with a brake on clients whose tokens
/// keep failing: every `INVALID_ACCESS_TOKEN` counts against the client's address, and once
/// an address has had `burst` of them (one more allowed every `refillInterval`), a token from
/// it that fails is answered RESOURCE_EXHAUSTED `RATE_LIMITED` instead — a guesser learns
/// nothing more and is told to slow down.
///
/// Every token is verified first, whatever its address has sent before: many users share one
/// address (a household, an office, a carrier's NAT), so refusing unchecked tokens from a busy
/// address would let one bad client there lock all its neighbours out. A check is cheap (an
/// Ed25519 signature with cached keys; an unknown `kid` refetches at most every 30 s), so
/// verifying what a throttled address sends costs little. Tokens that verify, and expired or
/// revoked ones (genuine tokens a client renews), never count. Thread-safe.
struct TokenFailureThrottle: ServerInterceptor {
    /// The token checks (``AuthenticationInterceptor``).
    let authentication: AuthenticationInterceptor
    /// Invalid tokens by client address.
    let failures: RateLimiter
    /// Counts the calls answered `RATE_LIMITED`, when the gateway counts
    /// (``GatewayMetrics/Limit/invalidTokens``).
    let refusals: Counter?

    /// Checks with `authentication`, allowing `burst` invalid tokens per address at once and
    /// one more every `refillInterval` before they are answered `RATE_LIMITED`, each counted in
    /// `refusals` when given.
    init(
        authentication: AuthenticationInterceptor, burst: Int = 20, refillInterval: Duration = .seconds(3),
        refusals: Counter? = nil
    ) {
        self.authentication = authentication
        failures = RateLimiter(burst: burst, refillInterval: refillInterval)
        self.refusals = refusals
    }

    func applies(to method: MethodInfo) -> Bool { authentication.applies(to: method) }

    func prepare(_ context: inout ServerContext) async throws {
        do {
            try await authentication.prepare(&context)
        } catch let error as RPCError where error.reason == AuthReason.invalidAccessToken.rawValue {
            if let wait = failures.admit(context.peerHost) {
                refusals?.increment()
                throw GatewayError.tooManyInvalidTokens(retryAfter: wait).rpcError
            }
            throw error
        }
    }
}
