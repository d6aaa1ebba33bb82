import RPC

/// How long ``StorefrontBasket/changes`` waits before watching again after a stream ended: a
/// backoff doubling per failed attempt from ``initial`` up to ``cap``, each delay jittered to
/// 50–100 % so that the devices of a whole shop do not reconnect in step after a restart. The
/// count of failed attempts starts again after a healthy stream — one that delivered its first
/// basket and stayed open for ``healthyAfter`` — so a stream that fails right after opening
/// (a server in trouble) keeps backing off instead of reconnecting at the first delay for ever.
struct ReconnectBackoff: Sendable {
    /// The delay after the first failed attempt.
    var initial: Duration
    /// The largest delay.
    var cap: Duration
    /// How long a stream must stay open after its first basket to count as healthy.
    var healthyAfter: Duration
    /// The share of the backoff a delay takes, in 0.5…1 (tests fix it).
    var jitter: @Sendable () -> Double = { Double.random(in: 0.5...1.0) }

    /// A quarter of a second, doubling up to 30 s; a stream is healthy after 5 s.
    static let standard = ReconnectBackoff(initial: .milliseconds(250), cap: .seconds(30), healthyAfter: .seconds(5))

    /// The delay before attempt number `failures + 1`, after `failures` (1-based) failed
    /// attempts in a row.
    func delay(afterFailures failures: Int) -> Duration {
        Duration.exponentialBackoff(initial: initial, multiplier: 2, step: failures, cap: cap) * jitter()
    }
}
