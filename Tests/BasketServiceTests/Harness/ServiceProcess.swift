import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// One of the service executables, started for a test on an OS-chosen port.
///
/// Thread-safe. `@unchecked` only because of `process`, used solely through `Process`'s
/// thread-safe members (isRunning, the pid, the exit status); everything else is immutable
/// or behind a `Mutex`.
final class ServiceProcess: @unchecked Sendable {
    /// The executable's name, e.g. `basket-svc`.
    let name: String
    /// The port it listens on.
    let port: Int
    /// Its standard error.
    let output: ProcessOutput
    private let process: Process
    private let stopped = Mutex(false)

    private init(name: String, port: Int, output: ProcessOutput, process: Process) {
        self.name = name
        self.port = port
        self.output = output
        self.process = process
    }

    /// `host:port` of the service, as the other services' `--…-addr` flags take it.
    var address: String { "127.0.0.1:\(port)" }

    /// Whether the process still runs.
    var isRunning: Bool { process.isRunning }

    /// The built executable `name`, next to the test bundle.
    static func executable(_ name: String) -> URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
    }

    /// Starts `name` with `arguments` and exactly `environment` among the `SHOP_*` variables,
    /// and waits for its `listening … address=host:port` log line.
    static func launch(
        _ name: String, arguments: [String], environment: [String: String], sourceLocation: SourceLocation
    ) async throws -> ServiceProcess {
        let executable = executable(name)
        try #require(
            FileManager.default.isExecutableFile(atPath: executable.path),
            "build it first: swift build --build-tests (\(executable.path))", sourceLocation: sourceLocation)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        // A SHOP_* variable of the developer's shell must not leak into the services.
        var inherited = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SHOP_") }
        inherited.merge(environment) { _, ours in ours }
        process.environment = inherited
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let output = ProcessOutput(draining: pipe)
        try process.run()

        let port = await output.first(within: .seconds(30)) { line -> Int? in
            guard line.contains("listening"),
                let range = line.range(of: #"address=[^ ]*:[0-9]+"#, options: .regularExpression)
            else { return nil }
            return line[range].split(separator: ":").last.flatMap { Int($0) }
        }
        let service = ServiceProcess(name: name, port: port ?? 0, output: output, process: process)
        guard port != nil else {
            await service.stop()
            Issue.record("\(name) never said where it listens:\n\(output.tail())", sourceLocation: sourceLocation)
            throw StackError.didNotStart(name)
        }
        return service
    }

    /// SIGTERM, then SIGKILL if it has not exited within `patience`; waits for the exit.
    func stop(patience: Duration = .seconds(5)) async {
        guard stopped.withLock({ stopped in defer { stopped = true }; return !stopped }) else { return }
        if process.isRunning { process.terminate() }
        let deadline = ContinuousClock.now + patience
        while process.isRunning && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        if process.isRunning { await kill() }
    }

    /// SIGKILL: the process dies at once, without draining; waits for the exit.
    func kill() async {
        stopped.withLock { $0 = true }
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        while process.isRunning { try? await Task.sleep(for: .milliseconds(10)) }
    }
}

/// Why the harness could not provide the services.
enum StackError: Error {
    /// The named executable exited or stayed silent instead of logging its address.
    case didNotStart(String)
    /// No verification email reached the address.
    case noVerificationMail(String)
}
