public import ArgumentParser
internal import Foundation
public import Logging

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

    public init() {}

    public mutating func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical.")
        }
        if let port, !(0...65535).contains(port) { throw ValidationError("--port must be 0...65535.") }
        guard graceSeconds >= 0 else { throw ValidationError("--grace-seconds must not be negative.") }
        guard logRefusedPerSecond >= 0 else { throw ValidationError("--log-refused-per-second must not be negative.") }
    }

    /// The port from the flag, `SHOP_PORT`, or the service's default.
    public func resolvedPort(default defaultPort: Int) -> Int {
        port ?? Int(ProcessInfo.processInfo.environment["SHOP_PORT"] ?? "") ?? defaultPort
    }

    /// The parsed log level.
    public var level: Logger.Level { Logger.Level(rawValue: logLevel) ?? .info }
}
