import RPC
import Telemetry

/// What one process served between two scrapes of its `/metrics`: calls per second, the share
/// that failed (any code but `OK`), the median and 99th percentile of their durations — in all
/// and per method. Built by ``init(target:earlier:later:)``; `--json` prints it as it is.
struct ProcessFigures: Sendable, Equatable, Encodable {
    /// The target's name.
    let name: String
    /// Its address, `host:port`.
    let address: String
    /// Whether both scrapes read its metrics.
    let up: Bool
    /// Why it is down (the later scrape's failure, else the earlier's); nil when up.
    let reason: String?
    /// Seconds between the two scrapes; nil when down.
    let intervalSeconds: Double?
    /// The process's figures, every method together; nil when down.
    let total: CallFigures?
    /// The methods that were called in between, busiest first.
    let methods: [MethodFigures]

    /// Figures of the calls `target` served between `earlier` and `later`.
    init(target: TopTarget, earlier: ProcessScrape, later: ProcessScrape) {
        name = target.name
        address = target.address.description
        switch (earlier, later) {
        case (.up(let before, let start), .up(let after, let end)):
            let seconds = (end - start) / .seconds(1)
            let first = ServerCallTotals(before)
            let second = ServerCallTotals(after)
            up = true
            reason = nil
            intervalSeconds = seconds
            total = CallFigures(from: first.all, to: second.all, seconds: seconds)
            methods = second.byMethod.compactMap { key, totals in
                let figures = CallFigures(from: first.byMethod[key] ?? .none, to: totals, seconds: seconds)
                return figures.callsPerSecond > 0 ? MethodFigures(service: key.service, method: key.method, figures: figures) : nil
            }.sorted { ($0.figures.callsPerSecond, $1.displayName) > ($1.figures.callsPerSecond, $0.displayName) }
        case (_, .down(let why)), (.down(let why), _):
            up = false
            reason = why
            intervalSeconds = nil
            total = nil
            methods = []
        }
    }
}

/// One method's figures between two scrapes.
struct MethodFigures: Sendable, Equatable, Encodable {
    /// The full gRPC service name, `shop.catalog.v1.CatalogService`.
    let service: String
    /// The method, `GetProduct`.
    let method: String
    /// Its figures.
    let figures: CallFigures

    /// `CatalogService/GetProduct`: the service's last name, enough to tell methods apart on a screen.
    var displayName: String {
        "\(service.split(separator: ".").last.map(String.init) ?? service)/\(method)"
    }
}

/// Calls per second, failure share and duration percentiles of some calls over an interval.
struct CallFigures: Sendable, Equatable, Encodable {
    /// Calls finished per second.
    let callsPerSecond: Double
    /// The share of those calls that ended with a code other than `OK` (0...1); nil without calls.
    let errorRatio: Double?
    /// The median call's duration in seconds (interpolated within its bucket); nil without calls.
    let p50Seconds: Double?
    /// The 99th percentile's; nil without calls.
    let p99Seconds: Double?

    /// The figures of what was counted between `earlier` and `later`, `seconds` apart. A count
    /// that went down means the process restarted in between: `later` is all since then.
    init(from earlier: ServerCallTotals.Totals, to later: ServerCallTotals.Totals, seconds: Double) {
        let restarted = later.calls < earlier.calls
        let calls = restarted ? later.calls : later.calls - earlier.calls
        let errors = restarted ? later.errors : max(0, later.errors - earlier.errors)
        callsPerSecond = seconds > 0 ? calls / seconds : 0
        errorRatio = calls > 0 ? errors / calls : nil
        let durations = HistogramQuantile.increase(from: restarted ? [] : earlier.durations, to: later.durations)
        p50Seconds = Self.finite(HistogramQuantile.quantile(0.5, of: durations))
        p99Seconds = Self.finite(HistogramQuantile.quantile(0.99, of: durations))
    }

    /// `value`, or nil when it is NaN or infinite (a histogram without observations).
    private static func finite(_ value: Double) -> Double? {
        value.isFinite ? value : nil
    }
}

/// A process's `rpc_server_` counters at one scrape, summed per method and in all: calls
/// finished, those that failed, and the cumulative duration buckets.
struct ServerCallTotals: Sendable {
    /// A method: its service and name.
    struct MethodKey: Hashable, Sendable {
        let service: String
        let method: String
    }

    /// Counts of some calls since the process started.
    struct Totals: Sendable {
        /// Calls finished.
        var calls: Double = 0
        /// Calls finished with a code other than `OK`.
        var errors: Double = 0
        /// `rpc_server_call_duration_seconds`' cumulative buckets.
        var durations: [HistogramBucket] = []

        /// Nothing counted: a method not yet called at the earlier scrape.
        static let none = Totals()
    }

    /// Every method together.
    private(set) var all = Totals()
    /// Each method that has a series.
    private(set) var byMethod: [MethodKey: Totals] = [:]

    /// The totals of `page`.
    init(_ page: ParsedMetrics) {
        for sample in page.samples(named: "rpc_server_calls_total") {
            let key = MethodKey(service: sample.labels["service"] ?? "", method: sample.labels["method"] ?? "")
            let failed = sample.labels["code"] != "OK"
            byMethod[key, default: .none].calls += sample.value
            all.calls += sample.value
            if failed {
                byMethod[key, default: .none].errors += sample.value
                all.errors += sample.value
            }
        }
        let durations = "rpc_server_call_duration_seconds"
        all.durations = HistogramQuantile.buckets(named: durations, in: page.samples)
        for key in byMethod.keys {
            byMethod[key]?.durations = HistogramQuantile.buckets(
                named: durations, in: page.samples, matching: ["service": key.service, "method": key.method])
        }
    }
}
