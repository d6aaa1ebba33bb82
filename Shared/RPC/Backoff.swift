/// Exponential backoff shared by the transport's reconnects and retries and by shopctl's retries.
extension Duration {
    /// The delay before attempt `step` (1-based) of an exponential backoff: `initial`, grown by
    /// `multiplier` per step after the first, never above `cap`.
    ///
    /// The growth stops at the cap, so no step count can overflow: the power itself would (a
    /// reconnect delay of 0.1 s × 1.6^104 does not fit a `Duration`, and a gateway whose upstream
    /// had been down for nine minutes crashed on it).
    package static func exponentialBackoff(initial: Duration, multiplier: Double, step: Int, cap: Duration) -> Duration {
        guard initial > .zero, initial < cap, multiplier > 1 else { return min(initial, cap) }
        let ceiling = cap / initial
        var factor = 1.0
        for _ in 1..<max(1, step) {
            factor *= multiplier
            if factor >= ceiling { return cap }
        }
        return min(initial * factor, cap)
    }
}
