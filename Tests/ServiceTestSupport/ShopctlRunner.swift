package import Foundation
package import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What one run of the real `shopctl` executable did.
package struct ShopctlResult: Sendable, CustomStringConvertible {
    /// The arguments it ran with.
    package let arguments: [String]
    /// Its exit status.
    package let status: Int32
    /// Everything it wrote to standard output.
    package let output: String
    /// Everything it wrote to standard error.
    package let errors: String
    /// How long it ran, from start to exit.
    package let duration: Duration

    /// The non-empty lines of standard output.
    package var lines: [String] { output.split(separator: "\n").map(String.init) }

    /// The command, its status and its output, for failure messages.
    package var description: String {
        "shopctl \(arguments.joined(separator: " ")) → \(status) after \(duration)\nstdout: \(output)\nstderr: \(errors)"
    }
}

/// Runs the built `shopctl` (next to the test bundle, like the services) with its own
/// `XDG_CONFIG_HOME`, the gateway's address, and none of the caller's other `SHOP_*` variables.
/// Immutable; `Sendable`.
package struct ShopctlRunner: Sendable {
    /// How the gateway's address reaches shopctl.
    package enum GatewayPassing: Sendable {
        /// `SHOP_GATEWAY` in the environment.
        case environment
        /// `--gateway host:port` before the other arguments.
        case flag
    }

    /// The config home (`XDG_CONFIG_HOME`) of every run.
    package let configHome: URL
    /// `host:port` of the gateway.
    package let gateway: String
    /// Whether the address goes as `SHOP_GATEWAY` or as `--gateway`.
    package let gatewayPassing: GatewayPassing

    /// A runner whose config home is `configHome`, calling the gateway at `gateway`.
    package init(configHome: URL, gateway: String, passing gatewayPassing: GatewayPassing = .environment) {
        self.configHome = configHome
        self.gateway = gateway
        self.gatewayPassing = gatewayPassing
    }

    /// `credentials.json`, where shopctl keeps the session (its README, "Sessions").
    package var credentialsFile: URL { configHome.appendingPathComponent("shopctl/credentials.json") }

    /// The process environment of a run, with `extra` on top.
    package func environment(_ extra: [String: String]) -> [String: String] {
        var ours = ["XDG_CONFIG_HOME": configHome.path]
        if gatewayPassing == .environment { ours["SHOP_GATEWAY"] = gateway }
        return ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SHOP_") }
            .merging(ours) { _, ours in ours }
            .merging(extra) { _, ours in ours }
    }

    /// The command line of `arguments`: with `--gateway` first when the address goes as a flag.
    package func commandLine(_ arguments: [String]) -> [String] {
        gatewayPassing == .flag ? ["--gateway", gateway] + arguments : arguments
    }

    /// Runs `shopctl arguments` with `input` on standard input, waiting up to `limit` (then
    /// SIGKILL and a recorded issue).
    package func run(
        _ arguments: [String], input: String? = nil, environment extra: [String: String] = [:],
        within limit: Duration = .seconds(40), sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> ShopctlResult {
        let executable = ServiceProcess.executable("shopctl")
        try #require(FileManager.default.isExecutableFile(atPath: executable.path), "build shopctl first", sourceLocation: sourceLocation)
        // Files, not pipes: nothing can block on a full pipe while we wait for the exit.
        let scratch = try TestScratch.makeDirectory(prefix: "shopctl-run")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outURL = scratch.appendingPathComponent("out")
        let errURL = scratch.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let outHandle = try FileHandle(forWritingTo: outURL)
        let errHandle = try FileHandle(forWritingTo: errURL)
        let process = Process()
        process.executableURL = executable
        process.arguments = commandLine(arguments)
        process.environment = environment(extra)
        process.standardOutput = outHandle
        process.standardError = errHandle
        let inputPipe = Pipe()
        process.standardInput = input == nil ? FileHandle.nullDevice : inputPipe
        let started = ContinuousClock.now
        try process.run()
        if let input {
            inputPipe.fileHandleForWriting.write(Data(input.utf8))
            try inputPipe.fileHandleForWriting.close()
        }
        let deadline = started + limit
        while process.isRunning {
            if ContinuousClock.now > deadline {
                kill(process.processIdentifier, SIGKILL)
                Issue.record("shopctl \(arguments) did not finish within \(limit)", sourceLocation: sourceLocation)
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        let duration = ContinuousClock.now - started
        try outHandle.close()
        try errHandle.close()
        return ShopctlResult(
            arguments: arguments, status: process.terminationStatus,
            output: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
            errors: String(decoding: try Data(contentsOf: errURL), as: UTF8.self), duration: duration)
    }

    /// Runs `shopctl arguments`, expecting exit 0; returns the result either way.
    @discardableResult
    package func succeed(
        _ arguments: [String], input: String? = nil, environment extra: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> ShopctlResult {
        let result = try await run(arguments, input: input, environment: extra, sourceLocation: sourceLocation)
        #expect(result.status == 0, "\(result)", sourceLocation: sourceLocation)
        return result
    }

    /// Starts a long-running `shopctl arguments` (a watch) whose standard output is read line by line.
    package func start(_ arguments: [String]) throws -> RunningShopctl {
        let process = Process()
        process.executableURL = ServiceProcess.executable("shopctl")
        process.arguments = commandLine(arguments)
        process.environment = environment([:])
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return RunningShopctl(
            process: process, output: ProcessLog(reading: output.fileHandleForReading, name: "shopctl-out"),
            errors: ProcessLog(reading: errors.fileHandleForReading, name: "shopctl-err"))
    }
}

/// A `shopctl` process still running (a watch), its output collected line by line.
///
/// `@unchecked Sendable`: `process` is used only through `Process`'s thread-safe members (the
/// pid, isRunning, the exit status); the logs are `Sendable`.
package final class RunningShopctl: @unchecked Sendable {
    private let process: Process
    /// Standard output, line by line.
    package let output: ProcessLog
    /// Standard error, line by line.
    package let errors: ProcessLog

    /// Wraps a started `process` and the logs reading its output.
    init(process: Process, output: ProcessLog, errors: ProcessLog) {
        self.process = process
        self.output = output
        self.errors = errors
    }

    /// Sends `signal` and waits up to `limit` for the exit; the status, or nil if it had to be killed.
    package func stop(with signal: Int32, within limit: Duration = .seconds(10)) async -> Int32? {
        if process.isRunning { kill(process.processIdentifier, signal) }
        let deadline = ContinuousClock.now + limit
        while process.isRunning && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            while process.isRunning { try? await Task.sleep(for: .milliseconds(10)) }
            return nil
        }
        return process.terminationStatus
    }

    /// Whether it is still running.
    package var isRunning: Bool { process.isRunning }
}
