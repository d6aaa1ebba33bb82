import Contracts
import RPC
import ServiceKit

/// Access-token checks in front of the gateway's routes, with a bound on the work a client can
/// cause with tokens that do not verify: each costs a signature check, many times the cost
/// of forwarding a call, and is refused before the rate limit (which counts signed-in callers
/// by user) ever sees it. So every `INVALID_ACCESS_TOKEN` counts against the client's address;
/// once an address has had `burst` of them (one more allowed every `refillInterval`), the
/// tokens it sends are refused RESOURCE_EXHAUSTED `RATE_LIMITED` without being checked.
/// Tokens that verify cost nothing here, nor do expired or revoked ones (genuine tokens a
/// client renews), so the users behind one address are only held back once tokens from it
/// keep failing. Thread-safe.
struct TokenFailureThrottle: ServerInterceptor {
    /// The token checks (``AuthenticationInterceptor``).
    let authentication: AuthenticationInterceptor
    /// Invalid tokens by client address.
    let failures: RateLimiter

    /// Checks with `authentication`, allowing `burst` invalid tokens per address at once and
    /// one more every `refillInterval`.
    init(authentication: AuthenticationInterceptor, burst: Int = 20, refillInterval: Duration = .seconds(3)) {
        self.authentication = authentication
        failures = RateLimiter(burst: burst, refillInterval: refillInterval)
    }

    func applies(to method: MethodInfo) -> Bool { authentication.applies(to: method) }

    func prepare(_ context: inout ServerContext) async throws {
        guard AccessTokenVerifier.bearerToken(in: context.metadata[MetadataKey.authorization]) != nil else {
            return try await authentication.prepare(&context)  // no token: nothing to check, or MISSING_TOKEN
        }
        let address = context.peerHost
        if failures.isEmpty(address) {
            throw GatewayReason.rateLimited.error(
                "Too many requests with access tokens that are not valid; sign in again, then retry in a minute.")
        }
        do {
            try await authentication.prepare(&context)
        } catch let error as RPCError where error.reason == AuthReason.invalidAccessToken.rawValue {
            _ = failures.allow(address)
            throw error
        }
    }
}
