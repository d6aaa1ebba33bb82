internal import Synchronization

/// The kinds of metric Prometheus's text format knows, as written on a `# TYPE` line.
public enum MetricType: String, Sendable {
    case counter, gauge, histogram
}

/// A metric's label names and values, in the order they are written. Values may be anything
/// (they are escaped when written); callers keep their number bounded — each distinct set is
/// a series held for the life of the process.
public struct MetricLabels: Sendable, Hashable, ExpressibleByDictionaryLiteral {
    /// The labels, in order.
    public var pairs: [Pair]

    /// One label.
    public struct Pair: Sendable, Hashable {
        /// The label's name: `[a-zA-Z_][a-zA-Z0-9_]*`, not starting with `__`.
        public var name: String
        /// Its value.
        public var value: String
    }

    /// Labels from name–value pairs, in order.
    public init(_ pairs: [(String, String)]) {
        self.pairs = pairs.map { Pair(name: $0.0, value: $0.1) }
        for pair in self.pairs { precondition(MetricsText.isValidLabelName(pair.name), "bad label name \(pair.name)") }
    }

    public init(dictionaryLiteral elements: (String, String)...) { self.init(elements) }

    /// These labels and one more, after them.
    public func adding(_ name: String, _ value: String) -> MetricLabels {
        var labels = self
        precondition(MetricsText.isValidLabelName(name), "bad label name \(name)")
        labels.pairs.append(Pair(name: name, value: value))
        return labels
    }
}

/// The metrics of one process (or one server in a test): families of series by name, each
/// with its help and type, written in Prometheus's text format by ``exposition()``.
///
/// Registering takes a lock and is meant for start-up or a series' first use; what it returns
/// (a ``Counter``, ``Gauge``, ``Histogram``) is what hot paths hold and update without one.
/// Registering the same name and labels again returns the same metric.
public final class MetricsRegistry: Sendable {
    /// One series: a metric updated in place, or a value read when scraped.
    enum Series: Sendable {
        case counter(Counter, hiddenWhileZero: Bool, companion: Counter?)
        case gauge(Gauge)
        case histogram(Histogram, companion: Counter?)
        case sampled(@Sendable () -> Double)
    }

    /// A family: every series of one name.
    struct Family: Sendable {
        let name: String
        let type: MetricType
        let help: String
        var series: [MetricLabels: Series] = [:]
        var order: [MetricLabels] = []
        /// Series made when scraped (one per replica, per pool state…): called at each scrape.
        var collectors: [@Sendable () -> [(MetricLabels, Double)]] = []
    }

    private let families = Mutex<(byName: [String: Family], order: [String])>(([:], []))

    /// An empty registry.
    public init() {}

    // MARK: Registering

    /// The counter `name` (ending `_total`) with `labels`. A counter `hiddenWhileZero` is left
    /// out of the exposition until it — or its `companion`, when given — counts something: a
    /// method's count of a status code stays out until the method is called (most are never
    /// called, most codes never happen), then shows from zero, so that its first count is an
    /// increase `rate()` sees rather than the series' first value.
    public func counter(
        _ name: String, help: String, labels: MetricLabels = [:], hiddenWhileZero: Bool = false, companion: Counter? = nil
    ) -> Counter {
        register(name, .counter, help, labels) { .counter(Counter(), hiddenWhileZero: hiddenWhileZero, companion: companion) } extract: {
            if case .counter(let counter, _, _) = $0 { counter } else { nil }
        }
    }

    /// The gauge `name` with `labels`.
    public func gauge(_ name: String, help: String, labels: MetricLabels = [:]) -> Gauge {
        register(name, .gauge, help, labels) { .gauge(Gauge()) } extract: {
            if case .gauge(let gauge) = $0 { gauge } else { nil }
        }
    }

    /// The histogram `name` with `labels` and `buckets` (every series of a name must share
    /// them). With a `companion`, it is left out until it or the companion has counted something
    /// (a method's durations, until the method is first called).
    public func histogram(
        _ name: String, help: String, buckets: HistogramBuckets, labels: MetricLabels = [:], companion: Counter? = nil
    ) -> Histogram {
        register(name, .histogram, help, labels) { .histogram(Histogram(buckets: buckets), companion: companion) } extract: {
            if case .histogram(let histogram, _) = $0, histogram.buckets == buckets { histogram } else { nil }
        }
    }

    /// A series of `type` (counter or gauge) whose value `read` gives when scraped: what
    /// something else already counts (open connections, bytes held, the process's CPU time).
    /// Registering it again replaces `read`.
    public func sampled(_ name: String, type: MetricType, help: String, labels: MetricLabels = [:], read: @escaping @Sendable () -> Double) {
        precondition(type != .histogram, "a sampled series is a counter or a gauge")
        families.withLock { state in
            Self.withFamily(name, type, help, in: &state) { family in
                if family.series[labels] == nil { family.order.append(labels) }
                family.series[labels] = .sampled(read)
            }
        }
    }

    /// Series of `name` made at each scrape by `collect` (labels and value of each): a set that
    /// changes while the process runs, such as one per upstream replica.
    public func collector(_ name: String, type: MetricType, help: String, collect: @escaping @Sendable () -> [(MetricLabels, Double)]) {
        precondition(type != .histogram, "a collected series is a counter or a gauge")
        families.withLock { state in
            Self.withFamily(name, type, help, in: &state) { $0.collectors.append(collect) }
        }
    }

    private func register<Metric: Sendable>(
        _ name: String, _ type: MetricType, _ help: String, _ labels: MetricLabels, make: () -> Series,
        extract: (Series) -> Metric?
    ) -> Metric {
        families.withLock { state in
            Self.withFamily(name, type, help, in: &state) { family in
                if let existing = family.series[labels] {
                    guard let metric = extract(existing) else { preconditionFailure("\(name)\(labels) registered twice, differently") }
                    return metric
                }
                let series = make()
                family.series[labels] = series
                family.order.append(labels)
                // `make` built the kind `extract` takes.
                guard let metric = extract(series) else { preconditionFailure("\(name): series of the wrong kind") }
                return metric
            }
        }
    }

    private static func withFamily<Result: Sendable>(
        _ name: String, _ type: MetricType, _ help: String, in state: inout (byName: [String: Family], order: [String]),
        _ body: (inout Family) -> Result
    ) -> Result {
        precondition(MetricsText.isValidMetricName(name), "bad metric name \(name)")
        precondition(type != .counter || name.hasSuffix("_total"), "counter \(name) must end _total")
        if state.byName[name] == nil {
            state.byName[name] = Family(name: name, type: type, help: help)
            state.order.append(name)
        }
        precondition(state.byName[name]?.type == type, "\(name) registered as two types")
        return body(&state.byName[name]!)
    }

    // MARK: Writing

    /// Every family, in the order first registered, in Prometheus's text exposition format
    /// (version 0.0.4): `# HELP`, `# TYPE`, then each series.
    public func exposition() -> String {
        let (byName, order) = families.withLock { ($0.byName, $0.order) }
        var text = MetricsText()
        for name in order {
            guard let family = byName[name] else { continue }
            var lines: [(MetricLabels, Series)] = family.order.compactMap { labels in family.series[labels].map { (labels, $0) } }
            for collect in family.collectors {
                lines += collect().map { ($0.0, Series.sampled { [value = $0.1] in value }) }
            }
            let visible = lines.filter { Self.isVisible($0.1) }
            guard !visible.isEmpty else { continue }
            text.header(name: name, type: family.type, help: family.help)
            for (labels, series) in visible { text.series(name: name, labels: labels, series) }
        }
        return text.output
    }

    /// Whether a series is written: a counter `hiddenWhileZero`, and a histogram with a
    /// companion, only once they or their companion have counted something — a process serving
    /// forty methods would otherwise write hundreds of empty lines at every scrape.
    private static func isVisible(_ series: Series) -> Bool {
        switch series {
        case .counter(let counter, let hiddenWhileZero, let companion):
            !hiddenWhileZero || counter.count > 0 || (companion?.count ?? 0) > 0
        case .histogram(let histogram, let companion):
            companion == nil || (companion?.count ?? 0) > 0 || histogram.hasObservations
        case .gauge, .sampled: true
        }
    }

    /// The content type of ``exposition()``.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"
}
