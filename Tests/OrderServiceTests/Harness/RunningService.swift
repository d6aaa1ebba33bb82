import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// One service executable started for a test, on a port the OS chose (or one it had before a
/// restart).
///
/// Thread-safe. `@unchecked` only because of `process`, which is used solely through
/// `Process`'s thread-safe members (isRunning, the pid); everything else is immutable.
final class RunningService: @unchecked Sendable {
    /// The executable's name, e.g. `order-svc`.
    let name: String
    /// The port it listens on.
    let port: Int
    /// Its standard error.
    let log: StandardErrorLog
    private let process: Process

    private init(name: String, port: Int, log: StandardErrorLog, process: Process) {
        self.name = name
        self.port = port
        self.log = log
        self.process = process
    }

    /// `host:port`, as the `--…-addr` flags of the other services take it.
    var address: String { "127.0.0.1:\(port)" }

    /// Whether the process is still running.
    var isRunning: Bool { process.isRunning }

    /// The built executable `name`, next to the test bundle.
    static func executable(_ name: String) -> URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
    }

    /// Starts `name` with `arguments` and, of the `SHOP_*` variables, exactly `environment`;
    /// returns once it logged `listening … address=127.0.0.1:PORT`.
    static func launch(
        _ name: String, arguments: [String], environment: [String: String], sourceLocation: SourceLocation
    ) async throws -> RunningService {
        let executable = executable(name)
        try #require(
            FileManager.default.isExecutableFile(atPath: executable.path),
            "build it first: swift build --build-tests (\(executable.path))", sourceLocation: sourceLocation)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        // A SHOP_* variable of the developer's shell must not reach the services.
        var variables = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SHOP_") }
        variables.merge(environment) { _, ours in ours }
        process.environment = variables
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let log = StandardErrorLog(draining: pipe, name: name)
        try process.run()

        let port = await log.first(within: .seconds(30)) { line -> Int? in
            guard line.contains("listening"),
                let range = line.range(of: #"address=127\.0\.0\.1:[0-9]+"#, options: .regularExpression)
            else { return nil }
            return line[range].split(separator: ":").last.flatMap { Int($0) }
        }
        let service = RunningService(name: name, port: port ?? 0, log: log, process: process)
        guard port != nil else {
            await service.kill()
            Issue.record("\(name) never logged its address:\n\(log.tail())", sourceLocation: sourceLocation)
            throw StackError.didNotStart(name)
        }
        return service
    }

    /// SIGTERM, then SIGKILL when it has not exited within `patience`; waits for the exit.
    func stop(patience: Duration = .seconds(4)) async {
        if process.isRunning { process.terminate() }
        let deadline = ContinuousClock.now + patience
        while process.isRunning && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        await kill()
    }

    /// SIGKILL: the process dies at once, mid-step if it was working; waits for the exit.
    func kill() async {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        while process.isRunning { try? await Task.sleep(for: .milliseconds(10)) }
    }
}

/// Why the harness could not provide a stack.
enum StackError: Error {
    /// The named executable exited or stayed silent instead of logging its address.
    case didNotStart(String)
    /// No verification email reached the address.
    case noVerificationMail(String)
}
