package import ArgumentParser
package import Logging
package import RPC
package import RPCHTTP2
package import Telemetry
internal import SystemCalls
internal import Dispatch
#if canImport(Glibc)
internal import Glibc
#endif

/// A startup or configuration failure, with a message saying what to fix; the executables
/// log it and exit with status 78 (EX_CONFIG).
package struct StartupError: Error, CustomStringConvertible {
    /// What went wrong and what to do.
    package let description: String

    /// A failure described by `description`.
    package init(_ description: String) { self.description = description }
}

/// The version every executable of this tree reports (`storefront_build_info`, `shopctl --version`).
package let storefrontVersion = "0.9.0"

/// A service without its socket: its complete router — interceptors, every method, health and
/// Describe (``Router/addStandardServices(health:servedHere:)``) — and what it serves from.
/// Each `<Name>Server.make` builds one; the process serves it over HTTP/2, tests can call the
/// router in-process.
package protocol ServiceCore: Sendable {
    /// Every method the service serves, behind its interceptors.
    var router: Router { get }
    /// The process's health: marked not serving when a termination signal arrives.
    var health: HealthMonitor { get }
    /// Loops beside the server (feeds, delivery, recovery, pruning), cancelled once it has drained.
    var companions: [@Sendable () async -> Void] { get }
    /// Closes what the service opened or was given (clients, databases, threads), after its
    /// companions have ended.
    func close() async
}

/// What ``ServiceMain`` runs: a service's ``ServiceCore`` behind an HTTP/2 server (not yet
/// listening). Each `<Name>Server` is one.
package protocol ServiceServer: Sendable {
    /// The service without its socket.
    associatedtype Core: ServiceCore
    /// The server, serving ``core``'s router; nothing listens until it starts.
    var server: HTTP2Server { get }
    /// The router and what it serves from.
    var core: Core { get }
}

/// The one start-up of every executable: standard descriptors, logging, the exit status of a
/// failed start, the server, signals and memory trimming. An executable's `@main` calls
/// ``main(_:)`` with its command; the command parses its own flags into its configuration and
/// calls ``serve(_:options:build:)`` with a closure that builds its server.
package enum ServiceMain {
    /// The entry point of every executable (its `@main`): opens /dev/null onto a closed
    /// standard descriptor, then runs `command` — parsing its flags, then its `run`, which
    /// calls ``serve(_:options:build:)`` — and exits with its status.
    ///
    /// Synchronous on purpose: the concurrency runtime's libdispatch opens its own descriptors
    /// (an eventfd, an epoll) as the first task starts, and with standard input or error closed
    /// they would take 0 or 2 — standard error's log lines would go into an eventfd. So the
    /// descriptors are filled here, before any task exists.
    package static func main(_ command: (some AsyncParsableCommand).Type) -> Never {
        System.openNullOntoClosedDescriptors(0...2)
        Task {
            await command.main()
            exit(0)
        }
        dispatchMain()
    }

    /// Runs the executable `name`: sets up logging from `options`, builds the server with a logger labelled `name`, and serves
    /// until SIGTERM or SIGINT (``run(_:logger:)``). A `StartupError` from `build` is logged as
    /// critical and the process exits with status 78 (EX_CONFIG), so supervisors can tell it
    /// from a crash.
    package static func serve(
        _ name: String, options: ServiceOptions, build: (Logger) async throws -> some ServiceServer
    ) async throws {
        bootstrapLogging(options)
        let logger = Logger(label: name)
        do {
            let service = try await build(logger)
            if let metrics = service.server.metrics {
                ProcessMetrics.register(in: metrics, program: name, version: storefrontVersion)
            }
            try await run(service, logger: logger)
        } catch let error as StartupError {
            logger.critical("cannot start: \(error)")
            throw ExitCode(78)
        }
    }

    /// Sets up swift-log once per process: one line per event on standard error. The first
    /// logging step of every service, so it also ignores SIGPIPE: a log line written to a pipe
    /// whose reader has gone (standard error piped to a crashed collector) must fail that
    /// write, not kill the service (its sockets already send with MSG_NOSIGNAL).
    package static func bootstrapLogging(level: Logger.Level) {
        signal(SIGPIPE, SIG_IGN)
        LoggingSystem.bootstrap { label in LogLineHandler(label: label, level: level) }
    }

    /// Sets up swift-log once per process from the common flags: their level, and how many
    /// refused calls' lines are written per second (``CallLineSampler``).
    package static func bootstrapLogging(_ options: ServiceOptions) {
        CallLineSampler.process.perSecond = options.logRefusedPerSecond
        bootstrapLogging(level: options.level)
    }

    /// Creates `path` (and parents) with mode 0700 when missing.
    package static func prepareDataDirectory(_ path: String) throws(StartupError) {
        do {
            try System.makeDirectory(path, mode: 0o700)
        } catch {
            throw StartupError("cannot create the data directory \(path): \(error)")
        }
    }

    /// The server for `router` (complete: ``Router/addStandardServices(health:servedHere:)``
    /// already called); not yet listening. With `group`, it serves on those loops (shared with
    /// the process's clients, as the gateway does) instead of its own; `handlersStayOnLoop`
    /// keeps handlers on those loops after they suspend
    /// (``ServerConfiguration/handlersStayOnLoop``); `limits` come from the service's flags
    /// (``ServiceOptions/serverLimits(defaultTimeout:)``); `web` serves what is not gRPC.
    package static func makeServer(
        router: Router, host: String, port: Int, gracePeriod: Duration, limits: ServerLimits, logger: Logger,
        metrics: MetricsRegistry?, spans: (any SpanRecorder)? = nil, group: EventLoopGroup? = nil, handlersStayOnLoop: Bool = false, web: (any WebHandler)? = nil
    ) throws -> HTTP2Server {
        var configuration = ServerConfiguration(host: host, port: port)
        configuration.metrics = metrics
        configuration.spans = spans
        // A service serves nothing but gRPC and its metrics; the gateway's edge serves both.
        let web = web ?? metrics.map { MetricsEndpoint(registry: $0) }
        configuration.gracePeriod = gracePeriod
        configuration.handlersStayOnLoop = handlersStayOnLoop
        configuration.defaultUnaryTimeout = limits.defaultUnaryTimeout
        configuration.answerBuffer = limits.answerBuffer
        guard let group else {
            return try HTTP2Server(configuration: configuration, router: router, logger: logger, web: web)
        }
        return HTTP2Server(configuration: configuration, router: router, logger: logger, group: group, ownsGroup: true, web: web)
    }

    /// The server for `router` (complete: ``Router/addStandardServices(health:servedHere:)``
    /// already called) on its own loops, listening where `configuration` says, with its grace
    /// period and limits; not yet listening.
    package static func makeServer(
        router: Router, configuration: some ServiceConfiguration, logger: Logger
    ) throws -> HTTP2Server {
        try makeServer(
            router: router, host: configuration.host, port: configuration.port, gracePeriod: configuration.gracePeriod,
            limits: configuration.serverLimits, logger: logger, metrics: configuration.metrics, spans: configuration.spans)
    }

    /// Starts `service`'s server with its core's companions and a ``MemoryTrimmer`` beside it, waits
    /// for SIGTERM or SIGINT, marks the health not serving and drains; then cancels the
    /// companions, waits for them, closes the core, and sends the spans still queued
    /// (``SpanRecorder/shutdown()``).
    package static func run(_ service: some ServiceServer, logger: Logger) async throws {
        let signals = TerminationSignals()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for companion in service.core.companions { group.addTask { await companion() } }
            group.addTask { await MemoryTrimmer().run(logger: logger) }
            try service.server.start()
            let signal = await signals.wait()
            logger.info("received \(signal); draining")
            service.core.health.markAllNotServing()
            await service.server.shutdown()
            logger.info("stopped")
            group.cancelAll()
        }
        await service.core.close()
        await service.server.spans?.shutdown()
    }
}

/// The limits every server takes from its flags (``ServiceOptions/serverLimits(defaultTimeout:)``):
/// the deadline of unary calls that send none, and the bounds on answers held for clients that
/// do not read them.
package struct ServerLimits: Sendable {
    /// See ``ServerConfiguration/defaultUnaryTimeout``.
    package var defaultUnaryTimeout: Duration? = ServerConfiguration.standardUnaryTimeout
    /// See ``ServerConfiguration/answerBuffer``.
    package var answerBuffer = AnswerBufferLimits()

    /// The defaults.
    package init() {}
}
