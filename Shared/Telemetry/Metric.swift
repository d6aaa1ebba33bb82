internal import Synchronization

/// A count that only goes up (Prometheus `counter`): calls, failures, bytes. Any thread adds
/// to it with one relaxed atomic add — no lock, no allocation. Adds wrap rather than trap on
/// overflow (2^64 is out of reach), which makes each a single `lock xadd` instead of a
/// compare-and-swap loop with an overflow check.
public final class Counter: Sendable {
    private let value = Atomic<UInt64>(0)

    /// A counter at zero; a ``MetricsRegistry`` makes them (``MetricsRegistry/counter(_:help:labels:)``).
    init() {}

    /// Adds one.
    @inline(__always)
    public func increment() { value.wrappingAdd(1, ordering: .relaxed) }

    /// Adds `amount`.
    @inline(__always)
    public func increment(by amount: UInt64) { value.wrappingAdd(amount, ordering: .relaxed) }

    /// The count now.
    public var count: UInt64 { value.load(ordering: .relaxed) }
}

/// A value that goes up and down (Prometheus `gauge`): connections open, watchers, bytes held.
public final class Gauge: Sendable {
    private let value = Atomic<Int64>(0)

    /// A gauge at zero; a ``MetricsRegistry`` makes them.
    init() {}

    /// Adds `amount` (negative to take away).
    @inline(__always)
    public func add(_ amount: Int64) { value.wrappingAdd(amount, ordering: .relaxed) }

    /// Adds one.
    @inline(__always)
    public func increment() { add(1) }

    /// Takes one away.
    @inline(__always)
    public func decrement() { add(-1) }

    /// Sets the value.
    public func set(_ newValue: Int64) { value.store(newValue, ordering: .relaxed) }

    /// The value now.
    public var current: Int64 { value.load(ordering: .relaxed) }
}

/// The upper bounds of a histogram's buckets, in the integer unit observations are made in
/// (nanoseconds, bytes), and the factor that turns that unit into the exposed one (seconds).
public struct HistogramBuckets: Sendable, Equatable {
    /// Upper bounds, ascending, in the observation unit; `+Inf` is implied.
    public let bounds: [UInt64]
    /// What one observation unit is in the exposed unit (1e-9 for nanoseconds as seconds).
    public let scale: Double

    /// Buckets with these bounds (ascending) and scale.
    public init(bounds: [UInt64], scale: Double) {
        precondition(!bounds.isEmpty && zip(bounds, bounds.dropFirst()).allSatisfy { $0 < $1 }, "bounds must ascend")
        self.bounds = bounds
        self.scale = scale
    }

    /// Call and query durations, observed in nanoseconds and exposed in seconds: 100 µs to 10 s,
    /// in steps of 1, 2.5 and 5 per decade.
    public static let durations = HistogramBuckets(
        bounds: [
            100_000, 250_000, 500_000, 1_000_000, 2_500_000, 5_000_000, 10_000_000, 25_000_000, 50_000_000,
            100_000_000, 250_000_000, 500_000_000, 1_000_000_000, 2_500_000_000, 5_000_000_000, 10_000_000_000,
        ], scale: 1e-9)

    /// Message sizes in bytes: 64 B to 4 MiB (the largest message a server takes), by fours.
    public static let messageSizes = HistogramBuckets(
        bounds: [64, 256, 1024, 4096, 16_384, 65_536, 262_144, 1_048_576, 4_194_304], scale: 1)
}

/// A distribution (Prometheus `histogram`): each observation adds one to its bucket and its
/// value to the sum, by relaxed atomic adds — no lock, no allocation.
public final class Histogram: Sendable {
    /// The bucket bounds.
    public let buckets: HistogramBuckets
    /// One cell per bucket (not cumulative) and one past the last bound (`+Inf`).
    private let counts: AtomicCells
    /// The sum of the observations, in the observation unit.
    private let total = Atomic<UInt64>(0)

    /// A histogram with no observations; a ``MetricsRegistry`` makes them.
    init(buckets: HistogramBuckets) {
        self.buckets = buckets
        counts = AtomicCells(count: buckets.bounds.count + 1)
    }

    /// Records one observation of `value` units (nanoseconds, bytes).
    @inline(__always)
    public func observe(_ value: UInt64) {
        var index = 0
        let bounds = buckets.bounds
        while index < bounds.count && value > bounds[index] { index += 1 }
        counts.add(1, at: index)
        total.wrappingAdd(value, ordering: .relaxed)
    }

    /// Records a duration, in nanoseconds (negative durations count as zero).
    @inline(__always)
    public func observe(_ duration: Duration) {
        guard duration > .zero else { return observe(UInt64(0)) }
        let (seconds, attoseconds) = duration.components
        observe(UInt64(seconds) &* 1_000_000_000 &+ UInt64(attoseconds / 1_000_000_000))
    }

    /// Whether anything was observed.
    public var hasObservations: Bool {
        (0..<counts.count).contains { counts.load($0) > 0 }
    }

    /// The cumulative count of each bucket (the last is `+Inf`, the total count) and the sum,
    /// as read now; the count is the sum of the buckets read, so the two agree.
    public func snapshot() -> (cumulative: [UInt64], sum: UInt64) {
        var running: UInt64 = 0
        var cumulative: [UInt64] = []
        cumulative.reserveCapacity(counts.count)
        for index in 0..<counts.count {
            running &+= counts.load(index)
            cumulative.append(running)
        }
        return (cumulative, total.load(ordering: .relaxed))
    }
}
