import Telemetry
import Testing

/// Quantiles from `_bucket` samples, as Prometheus's `histogram_quantile` gives them.
@Suite("HistogramQuantile: histogram_quantile's interpolation")
struct HistogramQuantileTests {
    /// Buckets from (upper bound, cumulative count) pairs.
    private func buckets(_ pairs: [(Double, Double)]) -> [HistogramBucket] {
        pairs.map { HistogramBucket(upperBound: $0.0, cumulativeCount: $0.1) }
    }

    @Test(
        "the rank's bucket, interpolated linearly from its lower bound (0 for the first)",
        arguments: [
            (0.5, 0.1),  // rank 10: the end of the first bucket
            (0.25, 0.05),  // rank 5: half way through (0, 0.1]
            (0.75, 0.15),  // rank 15: half way through (0.1, 0.2]
            (0.9, 0.18),
            (1.0, 0.2),
        ])
    func interpolation(q: Double, expected: Double) {
        let histogram = buckets([(0.1, 10), (0.2, 20), (.infinity, 20)])
        #expect(abs(HistogramQuantile.quantile(q, of: histogram) - expected) < 1e-12)
    }

    @Test("a rank in the +Inf bucket gives the highest finite bound")
    func rankInInfinity() {
        #expect(HistogramQuantile.quantile(0.99, of: buckets([(0.1, 5), (0.2, 5), (.infinity, 10)])) == 0.2)
    }

    @Test("no observations, no +Inf bucket, or a single bucket give NaN; q outside 0...1 gives ±Inf")
    func edges() {
        #expect(HistogramQuantile.quantile(0.5, of: buckets([(0.1, 0), (.infinity, 0)])).isNaN)
        #expect(HistogramQuantile.quantile(0.5, of: buckets([(0.1, 3), (0.2, 4)])).isNaN)
        #expect(HistogramQuantile.quantile(0.5, of: buckets([(.infinity, 4)])).isNaN)
        #expect(HistogramQuantile.quantile(0.5, of: []).isNaN)
        #expect(HistogramQuantile.quantile(.nan, of: buckets([(0.1, 3), (.infinity, 4)])).isNaN)
        #expect(HistogramQuantile.quantile(-0.1, of: buckets([(0.1, 3), (.infinity, 4)])) == -.infinity)
        #expect(HistogramQuantile.quantile(1.1, of: buckets([(0.1, 3), (.infinity, 4)])) == .infinity)
    }

    @Test("counts that dip (buckets read while observations arrive) are evened out, not interpolated backwards")
    func nonMonotonic() {
        let dipping = buckets([(1, 10), (2, 8), (4, 20), (.infinity, 20)])
        let evened = buckets([(1, 10), (2, 10), (4, 20), (.infinity, 20)])
        for q in [0.3, 0.5, 0.6, 0.9] {
            #expect(HistogramQuantile.quantile(q, of: dipping) == HistogramQuantile.quantile(q, of: evened))
        }
        #expect(HistogramQuantile.quantile(0.75, of: dipping) == 3)
    }

    @Test("the increase between two scrapes is the histogram of what happened in between; a reset takes the later")
    func increase() {
        let earlier = buckets([(0.1, 100), (0.2, 150), (.infinity, 160)])
        let later = buckets([(0.1, 100), (0.2, 170), (.infinity, 200)])
        let between = HistogramQuantile.increase(from: earlier, to: later)
        #expect(between == buckets([(0.1, 0), (0.2, 20), (.infinity, 40)]))
        // Of the 40 calls in between, half took more than 0.2 s: p50 is the bound, p99 too.
        #expect(HistogramQuantile.quantile(0.5, of: between) == 0.2)
        #expect(abs(HistogramQuantile.quantile(0.25, of: between) - 0.15) < 1e-12)
        let restarted = buckets([(0.1, 1), (0.2, 2), (.infinity, 2)])
        #expect(HistogramQuantile.increase(from: earlier, to: restarted) == restarted)
        #expect(HistogramQuantile.increase(from: [], to: later) == later)
    }

    @Test("buckets are gathered by upper bound across the series that match, in ascending order")
    func gathering() {
        let samples = [
            MetricSample(name: "d_bucket", labels: ["method": "A", "le": "+Inf"], value: 5),
            MetricSample(name: "d_bucket", labels: ["method": "A", "le": "0.5"], value: 2),
            MetricSample(name: "d_bucket", labels: ["method": "B", "le": "0.5"], value: 1),
            MetricSample(name: "d_bucket", labels: ["method": "B", "le": "+Inf"], value: 4),
            MetricSample(name: "d_count", labels: ["method": "B"], value: 4),
            MetricSample(name: "e_bucket", labels: ["method": "A", "le": "0.5"], value: 100),
        ]
        #expect(HistogramQuantile.buckets(named: "d", in: samples) == buckets([(0.5, 3), (.infinity, 9)]))
        #expect(HistogramQuantile.buckets(named: "d", in: samples, matching: ["method": "B"]) == buckets([(0.5, 1), (.infinity, 4)]))
        #expect(HistogramQuantile.buckets(named: "d", in: samples, matching: ["method": "C"]).isEmpty)
    }
}
