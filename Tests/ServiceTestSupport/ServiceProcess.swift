package import Foundation
package import RPC
import RPCHTTP2
import Synchronization
package import Testing

#if canImport(Glibc)
import Glibc
#endif

/// One service executable started by a test: its port (parsed from the
/// `listening … address=127.0.0.1:PORT` log line), a client of it, and its standard error.
///
/// The caller gives every flag (`--port`, `--data-dir`, …) and the `SHOP_*` variables; the
/// caller's own `SHOP_*` variables never reach the child.
///
/// Thread-safe. `@unchecked` only because of `process`, used solely through `Process`'s
/// thread-safe members (isRunning, the pid, the exit status); everything else is immutable,
/// `Sendable`, or behind a `Mutex`.
package final class ServiceProcess: @unchecked Sendable {
    /// The executable's name, e.g. `catalog-svc`.
    package let name: String
    /// The port it listens on, on 127.0.0.1.
    package let port: Int
    /// A client of it. ``stop(patience:)`` and ``kill()`` leave it open: call ``closeClient()``
    /// first when the service should not see it.
    package let client: RPCClient
    /// Its standard error.
    package let log: ProcessLog
    private let process: Process
    /// Whether `stop` or `kill` has begun, so that a later `stop` only reports.
    private let stopped = Mutex(false)
    /// Whether `closeClient()` has run, so that the client is closed once.
    private let clientClosed = Mutex(false)

    private init(name: String, port: Int, client: RPCClient, log: ProcessLog, process: Process) {
        self.name = name
        self.port = port
        self.client = client
        self.log = log
        self.process = process
    }

    /// `host:port` of the service, as the other services' `--…-addr` flags take it.
    package var address: String { "127.0.0.1:\(port)" }


    /// Its process id.
    package var processIdentifier: Int32 { process.processIdentifier }

    /// The built executable `name`, which SwiftPM puts next to the test bundle.
    package static func executable(_ name: String) -> URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
    }

    /// Starts `name` with exactly `arguments`, in the caller's environment without any
    /// `SHOP_*` variable plus `environment`, and waits up to 30 s for its `listening` line.
    /// When none comes, kills the process, records an issue and throws.
    package static func launch(
        _ name: String, arguments: [String], environment: [String: String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> ServiceProcess {
        let executable = executable(name)
        try #require(
            FileManager.default.isExecutableFile(atPath: executable.path),
            "build it first: swift build --build-tests (\(executable.path))", sourceLocation: sourceLocation)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        // A SHOP_* variable of the developer's shell must not change what the tests run against.
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SHOP_") }
            .merging(environment) { _, ours in ours }
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let log = ProcessLog(reading: errors.fileHandleForReading, name: name)

        guard let port = await log.first(within: .seconds(30), listeningPort(in:)) else {
            if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
            while process.isRunning { try? await Task.sleep(for: .milliseconds(10)) }
            Issue.record("\(name) never logged its listening address:\n\(log.tail())", sourceLocation: sourceLocation)
            throw ServiceLaunchError.noListeningAddress(name)
        }
        let client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: port))
        return ServiceProcess(name: name, port: port, client: client, log: log, process: process)
    }

    /// The port of a line such as `… listening … address=127.0.0.1:7002`.
    private static func listeningPort(in line: String) -> Int? {
        guard line.contains("listening"),
            let range = line.range(of: #"address=[^ ]+:[0-9]+"#, options: .regularExpression)
        else { return nil }
        return Int(line[range].split(separator: ":").last ?? "")
    }

    /// Closes ``client``; later calls do nothing.
    package func closeClient() async {
        let first = clientClosed.withLock { closed in
            defer { closed = true }
            return !closed
        }
        if first { await client.close() }
    }

    /// Sends SIGTERM and waits up to `patience` for the exit before SIGKILL; returns the exit
    /// status, or nil when the process had to be killed. Later calls only report.
    @discardableResult
    package func stop(patience: Duration = .seconds(5)) async -> Int32? {
        let alreadyStopped = stopped.withLock { stopped in
            defer { stopped = true }
            return stopped
        }
        if alreadyStopped { return process.isRunning ? nil : process.terminationStatus }
        if process.isRunning { process.terminate() }
        let deadline = ContinuousClock.now + patience
        while isRunning && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        guard isRunning else {
            // Ended (its /proc entry says so); Foundation learns of it a moment later, and only
            // then has its exit status.
            let reaped = ContinuousClock.now + .seconds(5)
            while process.isRunning && ContinuousClock.now < reaped { try? await Task.sleep(for: .milliseconds(10)) }
            return process.isRunning ? nil : process.terminationStatus
        }
        await kill()
        return nil
    }

    /// SIGSTOP: the process hangs, as one stuck in a long pause would — its connections stay
    /// open and take bytes, but nothing answers — until ``resume()``.
    package func pause() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGSTOP) }
    }

    /// SIGCONT: a paused process goes on.
    package func resume() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGCONT) }
    }

    /// SIGKILL: the process dies at once, as a crash or power loss would end it, without
    /// draining; waits for the exit.
    package func kill() async {
        stopped.withLock { $0 = true }
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        while isRunning { try? await Task.sleep(for: .milliseconds(10)) }
    }

    /// Whether the process is still running. Foundation's `isRunning` alone is not enough: it
    /// can miss an exit (it never reaped the child), and a wait on it then never ends; a
    /// process whose `/proc` entry is gone or a zombie has ended.
    package var isRunning: Bool {
        guard process.isRunning else { return false }
        let pid = process.processIdentifier
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
        let state = stat.split(separator: ")").last?.split(separator: " ").first
        return state != "Z"
    }
}

/// Why a service could not be launched.
package enum ServiceLaunchError: Error, CustomStringConvertible {
    /// The named executable exited, or stayed silent, instead of logging where it listens.
    case noListeningAddress(String)

    package var description: String {
        switch self {
        case .noListeningAddress(let name): "\(name) never logged its listening address"
        }
    }
}
