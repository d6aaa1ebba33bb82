import Contracts
import RPC

/// When shopctl calls a method again after a failure: which errors, how many attempts, and
/// the backoff between them (exponential, jittered).
///
/// Only failures before any response message are retried, and only where repeating the call
/// is safe: idempotent methods (Contracts says which) on `UNAVAILABLE`; `PlaceOrder`, whose
/// idempotency key makes it safe, also on `DEADLINE_EXCEEDED` and `ABORTED`/`REQUEST_IN_PROGRESS`.
struct CallRetry: Sendable {
    /// Attempts in all, the first included.
    var maxAttempts: Int
    /// The delay before the first retry.
    var initialBackoff: Duration
    /// The largest delay.
    var maxBackoff: Duration
    /// Whether an error is worth another attempt.
    var isRetryable: @Sendable (RPCError) -> Bool

    /// One attempt only.
    static let never = CallRetry(maxAttempts: 1, initialBackoff: .zero, maxBackoff: .zero) { _ in false }

    /// Up to 4 attempts on `UNAVAILABLE` for idempotent methods; one attempt for the rest.
    ///
    /// The gateway's `UPSTREAM_UNAVAILABLE` is final: the gateway has already retried the
    /// service and its circuit breaker says the service is down, so more attempts would only
    /// hide the outage for a few seconds (or answer late, once a restarted service is back).
    /// The gateway's own absence (``GatewayFailure``: no connection could be made) is final too:
    /// its address fails the same way a moment later, and the client waits out a reconnect
    /// backoff in between anyway. A connection lost before the answer (a gateway's graceful
    /// restart, a missed keepalive) is a plain `UNAVAILABLE` and retried.
    static func standard(for method: MethodInfo) -> CallRetry {
        guard method.idempotent else { return .never }
        return CallRetry(maxAttempts: 4, initialBackoff: .milliseconds(200), maxBackoff: .seconds(1)) {
            $0.code == .unavailable && $0.reason != GatewayReason.upstreamUnavailable.rawValue
                && !GatewayFailure.matches($0)
        }
    }

    /// `PlaceOrder`: up to 5 attempts, with the same idempotency key, on `UNAVAILABLE` (but a
    /// gateway host name that does not resolve),
    /// `DEADLINE_EXCEEDED` (the first attempt may have gone through: the key returns its answer)
    /// and `ABORTED`/`REQUEST_IN_PROGRESS` (the first attempt is still running).
    static let placeOrder = CallRetry(maxAttempts: 5, initialBackoff: .milliseconds(250), maxBackoff: .seconds(2)) {
        ($0.code == .unavailable && $0.reason != GatewayFailure.hostUnknown) || $0.code == .deadlineExceeded
            || ($0.code == .aborted && $0.reason == "REQUEST_IN_PROGRESS")
    }

    /// The delay before retry number `retry` (1-based): the backoff doubled per retry, capped,
    /// then jittered to 50–100 % so that several clients do not retry in step.
    func delay(beforeRetry retry: Int) -> Duration {
        Duration.exponentialBackoff(initial: initialBackoff, multiplier: 2, step: retry, cap: maxBackoff)
            * Double.random(in: 0.5...1.0)
    }
}
