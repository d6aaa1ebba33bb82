/// gRFC A6 retry policy for idempotent methods: attempts and exponential, jittered backoff.
public struct RetryPolicy: Sendable {
    /// Attempts in all, the first included (at most 5).
    public var maxAttempts = 5
    /// The delay before the first retry.
    public var initialBackoff: Duration = .milliseconds(100)
    /// The growth factor per retry.
    public var multiplier = 2.0
    /// The largest delay.
    public var maxBackoff: Duration = .seconds(1)
    /// The share of the backoff each delay takes: uniform in 0…1, as gRFC A6 specifies. A test
    /// that must act while a retry waits fixes it, since a draw near 0 retries at once.
    package var jitter: @Sendable () -> Double = { Double.random(in: 0...1) }

    /// The defaults: 5 attempts, 0.1 s, ×2, 1 s cap.
    public init() {}

    /// The randomized delay before retry number `retry` (1-based): uniform in 0…backoff.
    public func delay(beforeRetry retry: Int) -> Duration {
        Duration.exponentialBackoff(initial: initialBackoff, multiplier: multiplier, step: retry, cap: maxBackoff) * jitter()
    }
}

extension RetryPolicy {
    /// The one retry decision of every call path (``RPCClient/withRetries(_:options:mayRetry:_:)``
    /// and ``RPCClient/startUnary(_:request:options:mayRetry:completion:)``): the delay before
    /// retrying attempt number `attempt` (1-based) of `method` that failed with `error`, or nil
    /// when it may not be retried.
    ///
    /// Only `UNAVAILABLE` before any response header is retried — after headers the server has
    /// begun to answer — and only for an idempotent method, or for a call that never reached
    /// the server: a stream it refused unprocessed (`REFUSED_STREAM`), or one that was never
    /// sent (caused by ``CallNotSent``, or by a ``ConnectFailure``: its connection could not be
    /// made — with several replicas the next attempt goes to another), while attempts remain
    /// and the delay ends before the deadline.
    public func retryDelay(
        after attempt: Int, of method: MethodInfo, failedWith error: RPCError, sawResponseHeaders: Bool,
        deadline: ContinuousClock.Instant?
    ) -> Duration? {
        guard error.code == .unavailable, !sawResponseHeaders else { return nil }
        let transparent = error.reason == "REFUSED_STREAM" || error.cause is CallNotSent || error.cause is ConnectFailure
        guard method.idempotent || transparent, attempt < maxAttempts else { return nil }
        let delay = delay(beforeRetry: attempt)
        if let deadline, ContinuousClock.now + delay >= deadline { return nil }
        return delay
    }
}

/// The cause of a call's `UNAVAILABLE` when the call never left the client (its connection
/// closed before the request was written): retrying it cannot run it twice.
package struct CallNotSent: Error, Sendable, CustomStringConvertible {
    package init() {}
    package var description: String { "the call was not sent" }
}
