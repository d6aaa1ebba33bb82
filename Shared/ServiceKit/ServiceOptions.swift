public import ArgumentParser
internal import Foundation
public import Logging
internal import RPCHTTP2
internal import Telemetry

/// Flags every service executable accepts, each falling back to an environment variable.
public struct ServiceOptions: ParsableArguments {
    /// The address to listen on.
    @Option(help: "Address to listen on (env SHOP_HOST).")
    public var host: String = ProcessInfo.processInfo.environment["SHOP_HOST"] ?? "127.0.0.1"

    /// The port; each service passes its default.
    @Option(help: "Port to listen on (env SHOP_PORT).")
    public var port: Int?

    /// Where the service keeps its database and generated secrets.
    @Option(help: "Data directory (env SHOP_DATA_DIR).")
    public var dataDir: String = ProcessInfo.processInfo.environment["SHOP_DATA_DIR"] ?? ".data"

    /// Log level: trace, debug, info, notice, warning, error, critical.
    @Option(help: "Log level (env SHOP_LOG_LEVEL).")
    public var logLevel: String = ProcessInfo.processInfo.environment["SHOP_LOG_LEVEL"] ?? "info"

    /// Seconds in-flight calls get to finish after SIGTERM.
    @Option(help: "Graceful shutdown period in seconds (env SHOP_GRACE_SECONDS).")
    public var graceSeconds: Int = Int(ProcessInfo.processInfo.environment["SHOP_GRACE_SECONDS"] ?? "") ?? 10

    /// Call lines of refused calls (rate-limited, over a limit, refused at the HTTP level)
    /// written per second before the rest are only counted (``CallLineSampler``).
    @Option(help: "Lines of refused calls logged per second; the rest are counted in a summary line (env SHOP_LOG_REFUSED_PER_SECOND).")
    public var logRefusedPerSecond: Int = Int(ProcessInfo.processInfo.environment["SHOP_LOG_REFUSED_PER_SECOND"] ?? "") ?? 100

    /// The deadline of unary calls that arrive without one, in milliseconds; nil for the
    /// process's default (``ServerConfiguration/standardUnaryTimeout``, the gateway's 10 s).
    @Option(help: "Deadline of unary calls that come without one, in milliseconds; default 30000, the gateway's 10000 (env SHOP_DEFAULT_TIMEOUT_MS).")
    public var defaultTimeoutMs: Int?

    /// ``defaultTimeoutMs``, else `SHOP_DEFAULT_TIMEOUT_MS`.
    public var resolvedDefaultTimeoutMs: Int? {
        defaultTimeoutMs ?? Int(ProcessInfo.processInfo.environment["SHOP_DEFAULT_TIMEOUT_MS"] ?? "")
    }

    /// What one connection may hold of answers its client has not read before its new calls
    /// are refused (``AnswerBufferLimits/perConnection``).
    @Option(help: "Unread answer bytes one connection may hold before its new calls are refused SERVER_BUSY; K, M or G for KiB, MiB, GiB (env SHOP_ANSWER_BUFFER_PER_CONNECTION; default 16M).")
    public var answerBufferPerConnection: String = ProcessInfo.processInfo.environment["SHOP_ANSWER_BUFFER_PER_CONNECTION"] ?? "16M"

    /// What the whole process may hold of unread answers before connections above their fair
    /// share are refused (``AnswerBufferLimits/perProcess``).
    @Option(help: "Unread answer bytes the process may hold before connections holding more than their share of it are refused SERVER_BUSY (env SHOP_ANSWER_BUFFER_PER_PROCESS; default 64M).")
    public var answerBufferPerProcess: String = ProcessInfo.processInfo.environment["SHOP_ANSWER_BUFFER_PER_PROCESS"] ?? "64M"

    /// Whether the process counts nothing and serves no `/metrics` (``ServiceConfiguration/metrics``).
    @Flag(help: "Count nothing and serve no /metrics (env SHOP_METRICS=off).")
    public var noMetrics = ProcessInfo.processInfo.environment["SHOP_METRICS"] == "off"

    /// Where the spans of calls served and made are exported as OTLP/HTTP JSON
    /// (``OTLPSpanExporter``); nil exports none.
    @Option(help: "Export each call's span as OTLP/HTTP JSON to this collector, e.g. http://127.0.0.1:4318 (POSTs to /v1/traces when the URL has no path) (env SHOP_OTLP_ENDPOINT).")
    public var otlpEndpoint: String?

    /// ``otlpEndpoint``, else a non-empty `SHOP_OTLP_ENDPOINT`.
    public var resolvedOTLPEndpoint: String? {
        otlpEndpoint ?? ProcessInfo.processInfo.environment["SHOP_OTLP_ENDPOINT"].flatMap { $0.isEmpty ? nil : $0 }
    }

    public init() {}

    public mutating func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical.")
        }
        if let port, !(0...65535).contains(port) { throw ValidationError("--port must be 0...65535.") }
        guard graceSeconds >= 0 else { throw ValidationError("--grace-seconds must not be negative.") }
        guard logRefusedPerSecond >= 0 else { throw ValidationError("--log-refused-per-second must not be negative.") }
        if let timeout = resolvedDefaultTimeoutMs, timeout <= 0 { throw ValidationError("--default-timeout-ms must be positive.") }
        if let endpoint = resolvedOTLPEndpoint, OTLPSpanExporter.tracesURL(endpoint: endpoint) == nil {
            throw ValidationError("--otlp-endpoint must be an http:// URL with a host, such as http://127.0.0.1:4318 (got '\(endpoint)').")
        }
        for (flag, value) in [("--answer-buffer-per-connection", answerBufferPerConnection), ("--answer-buffer-per-process", answerBufferPerProcess)] {
            guard let bytes = Self.byteCount(value), bytes >= 64 * 1024 else {
                throw ValidationError("\(flag) must be a byte count of at least 64K, such as 4M or 262144 (got '\(value)').")
            }
        }
    }

    /// Carries the common flags into the configuration of the executable `program`: ``host``,
    /// the port (``resolvedPort(default:)`` with `defaultPort`), the grace period
    /// (``graceSeconds``), the server limits (``serverLimits(defaultTimeout:)`` with
    /// `defaultTimeout`), and with ``resolvedOTLPEndpoint`` an exporter of its spans named `program`,
    /// counting into its metrics (its thread starts here; ``ServiceMain/run(_:logger:)`` shuts it down).
    package func apply(
        to configuration: inout some ServiceConfiguration, program: String, defaultPort: Int,
        defaultTimeout: Duration = ServerConfiguration.standardUnaryTimeout
    ) {
        configuration.host = host
        configuration.port = resolvedPort(default: defaultPort)
        configuration.gracePeriod = .seconds(graceSeconds)
        configuration.serverLimits = serverLimits(defaultTimeout: defaultTimeout)
        if noMetrics { configuration.metrics = nil }
        if let endpoint = resolvedOTLPEndpoint {
            configuration.spans = OTLPSpanExporter(endpoint: endpoint, serviceName: program, metrics: configuration.metrics)
        }
    }

    /// The deadline of unary calls that arrive without one: ``resolvedDefaultTimeoutMs`` when
    /// given, else `standard`.
    package func defaultTimeout(or standard: Duration) -> Duration {
        resolvedDefaultTimeoutMs.map { .milliseconds($0) } ?? standard
    }

    /// The server limits these flags set, with `defaultTimeout` for a call without a deadline
    /// when ``defaultTimeoutMs`` is not given.
    package func serverLimits(defaultTimeout: Duration = ServerConfiguration.standardUnaryTimeout) -> ServerLimits {
        var limits = ServerLimits()
        limits.defaultUnaryTimeout = self.defaultTimeout(or: defaultTimeout)
        limits.answerBuffer.perConnection = Self.byteCount(answerBufferPerConnection) ?? limits.answerBuffer.perConnection
        limits.answerBuffer.perProcess = Self.byteCount(answerBufferPerProcess) ?? limits.answerBuffer.perProcess
        return limits
    }

    /// A byte count written as digits with an optional K, M or G (KiB, MiB, GiB); nil when
    /// it is not one.
    static func byteCount(_ text: String) -> Int? {
        let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        var digits = Substring(text.uppercased())
        var unit = 1
        if let last = digits.last, let scale = units[last] {
            unit = scale
            digits = digits.dropLast()
        }
        guard let value = Int(digits), value >= 0, value <= Int.max / unit else { return nil }
        return value * unit
    }

    /// The port from the flag, `SHOP_PORT`, or the service's default.
    public func resolvedPort(default defaultPort: Int) -> Int {
        port ?? Int(ProcessInfo.processInfo.environment["SHOP_PORT"] ?? "") ?? defaultPort
    }

    /// The parsed log level.
    public var level: Logger.Level { Logger.Level(rawValue: logLevel) ?? .info }
}
