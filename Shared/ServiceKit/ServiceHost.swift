internal import ArgumentParser
internal import Foundation
package import Logging
package import RPC
package import RPCHTTP2

/// A startup or configuration failure, with a message saying what to fix; the executables
/// log it and exit with status 78 (EX_CONFIG).
package struct StartupError: Error, CustomStringConvertible {
    /// What went wrong and what to do.
    package let description: String

    /// A failure described by `description`.
    package init(_ description: String) { self.description = description }
}

/// The pieces every service executable assembles the same way: its data directory, its
/// server with the standard services, and the run loop with companion tasks beside the server.
package enum ServiceHost {
    /// Runs `body` (build and run a service); a `StartupError` is logged as critical and the
    /// process exits with status 78 (EX_CONFIG), so supervisors can tell it from a crash.
    package static func launch(logger: Logger, _ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let error as StartupError {
            logger.critical("cannot start: \(error)")
            throw ExitCode(78)
        }
    }

    /// Creates `path` (and parents) with mode 0700 when missing.
    package static func prepareDataDirectory(_ path: String) throws(StartupError) {
        do {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw StartupError("cannot create the data directory \(path): \(error)")
        }
    }

    /// The server for `router`, with health and Describe added; not yet listening. With
    /// `group`, it serves on those loops (shared with the process's clients, as the gateway
    /// does) instead of its own; `handlersStayOnLoop` keeps handlers on those loops after
    /// they suspend (``ServerConfiguration/handlersStayOnLoop``); `limits` come from the
    /// service's flags (``ServiceOptions/serverLimits(defaultTimeout:)``). `servedHere`: see
    /// ``Router/addStandardServices(health:servedHere:)``.
    package static func makeServer(
        router: Router, host: String, port: Int, gracePeriod: Duration, logger: Logger,
        health: HealthMonitor = HealthMonitor(), group: EventLoopGroup? = nil, handlersStayOnLoop: Bool = false,
        limits: ServerLimits = ServerLimits(), servedHere: [String]? = nil,
        web: ((Router) throws -> any WebHandler)? = nil
    ) throws -> (HTTP2Server, HealthMonitor) {
        var router = router
        router.addStandardServices(health: health, servedHere: servedHere)
        let web = try web?(router)
        var configuration = ServerConfiguration(host: host, port: port)
        configuration.gracePeriod = gracePeriod
        configuration.handlersStayOnLoop = handlersStayOnLoop
        configuration.defaultUnaryTimeout = limits.defaultUnaryTimeout
        configuration.answerBuffer = limits.answerBuffer
        guard let group else {
            return (try HTTP2Server(configuration: configuration, router: router, logger: logger, web: web), health)
        }
        return (HTTP2Server(configuration: configuration, router: router, logger: logger, group: group, ownsGroup: true, web: web), health)
    }

    /// Serves until SIGTERM or SIGINT (``ServiceRunner/run(_:health:logger:)``) with
    /// `companions` (feeds, delivery loops, recovery passes) and a ``MemoryTrimmer`` running
    /// beside the server; when the server has drained, cancels them, waits for them, then runs
    /// `cleanup` (closing clients and databases).
    package static func run(
        _ server: HTTP2Server, health: HealthMonitor, logger: Logger,
        companions: [@Sendable () async -> Void], cleanup: @Sendable () async -> Void
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for companion in companions { group.addTask { await companion() } }
            group.addTask { await MemoryTrimmer().run(logger: logger) }
            try await ServiceRunner.run(server, health: health, logger: logger)
            group.cancelAll()
        }
        await cleanup()
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
