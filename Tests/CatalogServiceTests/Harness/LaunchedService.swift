import Foundation
import RPCHTTP2
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// One service executable started by the tests: its port (parsed from the `listening` log
/// line), a client connected to it, and its standard error.
///
/// Thread-safe. `@unchecked` only for `process`, which is touched solely through `Process`'s
/// thread-safe members (isRunning, processIdentifier, terminate, terminationStatus); the other
/// stored properties are immutable and `Sendable`, and `stopped` is a `Mutex`.
final class LaunchedService: @unchecked Sendable {
    /// The executable's name, e.g. `catalog-svc`.
    let name: String
    /// The port it listens on, on 127.0.0.1.
    let port: Int
    /// A client of it.
    let client: RPCClient
    /// Its standard error.
    let log: StandardErrorLines
    private let process: Process
    private let stopped = Mutex(false)

    private init(name: String, port: Int, client: RPCClient, log: StandardErrorLines, process: Process) {
        self.name = name
        self.port = port
        self.client = client
        self.log = log
        self.process = process
    }

    /// The built executable `name`, which SwiftPM puts next to the test bundle.
    static func executable(_ name: String) -> URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
    }

    /// Starts `name` with `--port 0 --log-level info` and `arguments`, in an environment of
    /// `environment` plus the caller's without any `SHOP_*` variable, and waits for the address
    /// it logs.
    static func launch(
        _ name: String, arguments: [String], environment: [String: String], sourceLocation: SourceLocation
    ) async throws -> LaunchedService {
        let executable = executable(name)
        try #require(
            FileManager.default.isExecutableFile(atPath: executable.path),
            "\(executable.path) is missing: swift build --build-tests builds it", sourceLocation: sourceLocation)
        let process = Process()
        process.executableURL = executable
        process.arguments = ["--port", "0", "--log-level", "info", "--grace-seconds", "2"] + arguments
        // A developer's own SHOP_* settings must not change what the tests run against.
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SHOP_") }
            .merging(environment) { _, ours in ours }
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let log = StandardErrorLines(reading: errors.fileHandleForReading, processName: name)
        guard let port = await log.first(within: .seconds(30), listeningPort(in:)) else {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            Issue.record("\(name) logged no listening address:\n\(log.tail())", sourceLocation: sourceLocation)
            throw LaunchError.noListeningAddress(name)
        }
        let client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: port))
        return LaunchedService(name: name, port: port, client: client, log: log, process: process)
    }

    /// The port of a line such as `… listening … address=127.0.0.1:7002`.
    private static func listeningPort(in line: String) -> Int? {
        guard line.contains("listening"),
            let match = line.range(of: #"address=127\.0\.0\.1:[0-9]+"#, options: .regularExpression)
        else { return nil }
        return Int(line[match].split(separator: ":").last ?? "")
    }

    /// Whether the process is still running.
    var isRunning: Bool { process.isRunning }

    /// Kills the process with SIGKILL, as a crash or power loss would end it, and waits for it.
    func crash() async {
        stopped.withLock { $0 = true }
        await client.close()
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        while process.isRunning { try? await Task.sleep(for: .milliseconds(10)) }
    }

    /// Closes the client, sends SIGTERM and waits up to five seconds before SIGKILL; returns
    /// the exit status, or nil when the process had to be killed. Later calls do nothing.
    @discardableResult
    func stop() async -> Int32? {
        let alreadyStopped = stopped.withLock { stopped in
            defer { stopped = true }
            return stopped
        }
        if alreadyStopped { return process.isRunning ? nil : process.terminationStatus }
        await client.close()
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        let deadline = ContinuousClock.now + .seconds(5)
        while process.isRunning, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(25))
        }
        guard process.isRunning else { return process.terminationStatus }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return nil
    }
}

/// Why a service could not be launched.
enum LaunchError: Error, CustomStringConvertible {
    /// The process exited, or stayed silent, instead of logging where it listens.
    case noListeningAddress(String)

    var description: String {
        switch self {
        case .noListeningAddress(let name): "\(name) never logged its listening address"
        }
    }
}
