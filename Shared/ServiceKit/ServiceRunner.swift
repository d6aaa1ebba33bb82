internal import Dispatch
internal import Foundation
public import Logging
internal import RPC
public import RPCHTTP2
#if canImport(Glibc)
internal import Glibc
#endif

/// Runs a server until SIGTERM or SIGINT, then shuts it down gracefully and returns.
public enum ServiceRunner {
    /// Sets up swift-log once per process: one line per event on standard error. The first
    /// thing every service does, so it also ignores SIGPIPE: a log line written to a pipe whose
    /// reader has gone (standard error piped to a crashed collector) must fail that write, not
    /// kill the service (its sockets already send with MSG_NOSIGNAL).
    public static func bootstrapLogging(level: Logger.Level) {
        signal(SIGPIPE, SIG_IGN)
        LoggingSystem.bootstrap { label in LogLineHandler(label: label, level: level) }
    }

    /// Sets up swift-log once per process from the common flags: their level, and how many
    /// refused calls' lines are written per second (``CallLineSampler``).
    public static func bootstrapLogging(_ options: ServiceOptions) {
        CallLineSampler.process.perSecond = options.logRefusedPerSecond
        bootstrapLogging(level: options.level)
    }

    /// Starts `server`, marks `health` serving, waits for a termination signal, then marks it
    /// not serving and drains.
    public static func run(_ server: HTTP2Server, health: HealthMonitor, logger: Logger) async throws {
        let signals = TerminationSignals()
        try server.start()
        let signal = await signals.wait()
        logger.info("received \(signal); draining")
        health.markAllNotServing()
        await server.shutdown()
        logger.info("stopped")
    }
}

/// SIGTERM and SIGINT as an awaitable event.
final class TerminationSignals {
    private let sources: [any DispatchSourceSignal]
    private let stream: AsyncStream<String>

    init() {
        let (stream, continuation) = AsyncStream<String>.makeStream()
        self.stream = stream
        sources = [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT")].map { number, name in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(name) }
            source.resume()
            return source
        }
    }

    /// The name of the first signal received.
    func wait() async -> String {
        for await name in stream { return name }
        return "end of signals"
    }
}
