/// One bucket of a scraped histogram: its upper bound (`le`) and the count of observations at
/// or below it (cumulative, as exposed).
public struct HistogramBucket: Sendable, Equatable {
    /// The bucket's upper bound; `+Inf` for the last.
    public var upperBound: Double
    /// Observations at or below ``upperBound``.
    public var cumulativeCount: Double

    /// A bucket with these figures.
    public init(upperBound: Double, cumulativeCount: Double) {
        self.upperBound = upperBound
        self.cumulativeCount = cumulativeCount
    }
}

/// Quantiles of histograms as Prometheus's `histogram_quantile` computes them: the bucket that
/// holds the rank, and a linear interpolation inside it, assuming observations spread evenly
/// ([promql/quantile.go](https://github.com/prometheus/prometheus/blob/main/promql/quantile.go)).
/// Stateless.
public enum HistogramQuantile {
    /// The buckets of histogram `name` among `samples` whose labels (`le` aside) include every
    /// pair of `matching`, summed by upper bound across the series that match — so the
    /// buckets of every method of a service add up to the service's — in ascending order.
    public static func buckets(named name: String, in samples: [MetricSample], matching: [String: String] = [:]) -> [HistogramBucket] {
        var counts: [Double: Double] = [:]
        for sample in samples where sample.name == name + "_bucket" {
            guard let bound = sample.labels["le"].flatMap(MetricsParser.parseValue) else { continue }
            guard matching.allSatisfy({ sample.labels[$0.key] == $0.value }) else { continue }
            counts[bound, default: 0] += sample.value
        }
        return counts.map { HistogramBucket(upperBound: $0.key, cumulativeCount: $0.value) }.sorted { $0.upperBound < $1.upperBound }
    }

    /// What `later` counted since `earlier` (two scrapes of the same histogram), bucket by
    /// bucket: the histogram of the observations in between. When a count went down the
    /// process restarted between the scrapes, and `later` is what it counted since.
    public static func increase(from earlier: [HistogramBucket], to later: [HistogramBucket]) -> [HistogramBucket] {
        let before = Dictionary(earlier.map { ($0.upperBound, $0.cumulativeCount) }) { first, _ in first }
        let differences = later.map { bucket in
            HistogramBucket(upperBound: bucket.upperBound, cumulativeCount: bucket.cumulativeCount - (before[bucket.upperBound] ?? 0))
        }
        return differences.contains { $0.cumulativeCount < 0 } ? later : differences
    }

    /// The `q`-quantile (0 ... 1) of the observations in `buckets` (ascending, ending with
    /// `+Inf`), as `histogram_quantile(q, …)` gives it: NaN without observations, without a
    /// `+Inf` bucket or with fewer than two buckets; the highest finite bound when the rank
    /// falls in `+Inf`; `-Inf`/`+Inf` for `q` below 0 or above 1.
    public static func quantile(_ q: Double, of buckets: [HistogramBucket]) -> Double {
        if q.isNaN { return .nan }
        if q < 0 { return -.infinity }
        if q > 1 { return .infinity }
        guard buckets.count >= 2, let last = buckets.last, last.upperBound == .infinity else { return .nan }
        let counts = monotonic(buckets.map(\.cumulativeCount))
        let observations = counts[counts.count - 1]
        guard observations > 0 else { return .nan }
        var rank = q * observations
        let index = counts.firstIndex { $0 >= rank } ?? counts.count - 1
        if index == buckets.count - 1 { return buckets[buckets.count - 2].upperBound }
        if index == 0 && buckets[0].upperBound <= 0 { return buckets[0].upperBound }
        var lower = 0.0
        var count = counts[index]
        if index > 0 {
            lower = buckets[index - 1].upperBound
            count -= counts[index - 1]
            rank -= counts[index - 1]
        }
        return lower + (buckets[index].upperBound - lower) * (rank / count)
    }

    /// `counts` made non-decreasing, each at least the one before: scrapes of buckets read one
    /// at a time while observations arrive can dip, which Prometheus evens out the same way.
    private static func monotonic(_ counts: [Double]) -> [Double] {
        var result = counts
        for index in result.indices.dropFirst() where result[index] < result[index - 1] {
            result[index] = result[index - 1]
        }
        return result
    }
}
