import Foundation
import ServiceTestSupport
import Testing

@testable import shopctl

#if canImport(Glibc)
import Glibc
#endif

/// What one run of the real `shopctl` executable did.
struct ShopctlResult: Sendable, CustomStringConvertible {
    /// The arguments it ran with.
    let arguments: [String]
    /// Its exit status.
    let status: Int32
    /// Everything it wrote to standard output.
    let output: String
    /// Everything it wrote to standard error.
    let errors: String

    /// The non-empty lines of standard output.
    var lines: [String] { output.split(separator: "\n").map(String.init) }

    /// The command, its status and its output, for failure messages.
    var description: String { "shopctl \(arguments.joined(separator: " ")) → \(status)\nstdout: \(output)\nstderr: \(errors)" }
}

/// Runs the built `shopctl` (next to the test bundle, like the services) with
/// `XDG_CONFIG_HOME` and `SHOP_GATEWAY` set, and none of the caller's other `SHOP_*` variables.
/// Immutable; `Sendable`.
struct ShopctlRunner: Sendable {
    /// The config home (`XDG_CONFIG_HOME`) of every run.
    let configHome: URL
    /// `host:port` of the gateway.
    let gateway: String

    /// Where shopctl keeps its files for these runs.
    var paths: ConfigPaths { ConfigPaths(environment: ["XDG_CONFIG_HOME": configHome.path]) }

    /// The process environment of a run, with `extra` on top.
    func environment(_ extra: [String: String]) -> [String: String] {
        ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SHOP_") }
            .merging(["XDG_CONFIG_HOME": configHome.path, "SHOP_GATEWAY": gateway]) { _, ours in ours }
            .merging(extra) { _, ours in ours }
    }

    /// Runs `shopctl arguments` with `input` on standard input, waiting up to `limit` (then
    /// SIGKILL and a recorded issue).
    func run(
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
        process.arguments = arguments
        process.environment = environment(extra)
        process.standardOutput = outHandle
        process.standardError = errHandle
        let inputPipe = Pipe()
        process.standardInput = input == nil ? FileHandle.nullDevice : inputPipe
        try process.run()
        if let input {
            inputPipe.fileHandleForWriting.write(Data(input.utf8))
            try inputPipe.fileHandleForWriting.close()
        }
        let deadline = ContinuousClock.now + limit
        while process.isRunning {
            if ContinuousClock.now > deadline {
                kill(process.processIdentifier, SIGKILL)
                Issue.record("shopctl \(arguments) did not finish within \(limit)", sourceLocation: sourceLocation)
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        try outHandle.close()
        try errHandle.close()
        return ShopctlResult(
            arguments: arguments, status: process.terminationStatus,
            output: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
            errors: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }

    /// Runs `shopctl arguments`, expecting exit 0; returns the result either way.
    @discardableResult
    func succeed(
        _ arguments: [String], input: String? = nil, environment extra: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> ShopctlResult {
        let result = try await run(arguments, input: input, environment: extra, sourceLocation: sourceLocation)
        #expect(result.status == 0, "\(result)", sourceLocation: sourceLocation)
        return result
    }

    /// Starts a long-running `shopctl arguments` (a watch) whose standard output is read line by line.
    func start(_ arguments: [String]) throws -> RunningShopctl {
        let process = Process()
        process.executableURL = ServiceProcess.executable("shopctl")
        process.arguments = arguments
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
final class RunningShopctl: @unchecked Sendable {
    private let process: Process
    /// Standard output, line by line.
    let output: ProcessLog
    /// Standard error, line by line.
    let errors: ProcessLog

    /// Wraps a started `process` and the logs reading its output.
    init(process: Process, output: ProcessLog, errors: ProcessLog) {
        self.process = process
        self.output = output
        self.errors = errors
    }

    /// Sends `signal` and waits up to `limit` for the exit; the status, or nil if it had to be killed.
    func stop(with signal: Int32 = SIGINT, within limit: Duration = .seconds(10)) async -> Int32? {
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
    var isRunning: Bool { process.isRunning }
}
